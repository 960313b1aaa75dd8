//! Index definitions made over other columns: a batched migration builds
//! each index over a reference `CONCURRENTLY` on the new column before the
//! swap, from the definition PostgreSQL wrote (`pg_get_indexdef`), with the
//! column's name replaced where it stands as a column — never inside a
//! string, in a qualified name, as a function's or a type's name, or in the
//! storage options. The swap then gives it the old index's name, and the
//! migration's last check compares every definition with the one read when
//! planning.

use uuidforge_ident::quote_ident;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A bare identifier or keyword (as written).
    Word(String),
    /// A quoted identifier (its name).
    Quoted(String),
    /// A string or anything else, as written.
    Other(String),
    /// White space, as written.
    Space(String),
}

impl Token {
    fn text(&self) -> String {
        match self {
            Token::Word(w) | Token::Other(w) | Token::Space(w) => w.clone(),
            Token::Quoted(q) => quote_ident(q),
        }
    }

    /// The identifier it names: a bare word folds to lower case.
    fn name(&self) -> Option<String> {
        match self {
            Token::Word(w) => Some(w.to_lowercase()),
            Token::Quoted(q) => Some(q.clone()),
            _ => None,
        }
    }

    fn is_keyword(&self, keyword: &str) -> bool {
        matches!(self, Token::Word(w) if w.eq_ignore_ascii_case(keyword))
    }
}

fn tokens(sql: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            while i < chars.len() && chars[i].is_whitespace() {
                i += 1;
            }
            out.push(Token::Space(chars[start..i].iter().collect()));
        } else if c == '"' {
            let mut name = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return None,
                    Some('"') if chars.get(i + 1) == Some(&'"') => {
                        name.push('"');
                        i += 2;
                    }
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some(&ch) => {
                        name.push(ch);
                        i += 1;
                    }
                }
            }
            out.push(Token::Quoted(name));
        } else if c == '\'' || ((c == 'E' || c == 'e') && chars.get(i + 1) == Some(&'\'')) {
            let escapes = c != '\'';
            i += if escapes { 2 } else { 1 };
            loop {
                match chars.get(i) {
                    None => return None,
                    Some('\\') if escapes => i += 2,
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => i += 2,
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
            out.push(Token::Other(chars[start..i].iter().collect()));
        } else if c.is_alphabetic() || c == '_' {
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
            {
                i += 1;
            }
            out.push(Token::Word(chars[start..i].iter().collect()));
        } else if c == '$' {
            // A dollar-quoted string ($tag$ … $tag$), as a whole.
            let tag_end = (i + 1..chars.len()).find(|&j| chars[j] == '$')?;
            let tag: String = chars[i..=tag_end].iter().collect();
            let body: String = chars[tag_end + 1..].iter().collect();
            let close = body.find(&tag)?;
            let end = tag_end + 1 + body[..close].chars().count() + tag.chars().count();
            out.push(Token::Other(chars[i..end].iter().collect()));
            i = end;
        } else {
            i += 1;
            out.push(Token::Other(c.to_string()));
        }
    }
    Some(out)
}

/// How [`index_over`] makes an index again.
#[derive(Debug, Clone, Copy, Default)]
pub struct Remake<'a> {
    /// On this table (quoted, qualified) instead (a partition of the
    /// table of a partitioned index).
    pub on: Option<&'a str>,
}

/// An index definition made again under another name: whether it is
/// unique, and what follows the name (` ON table USING method (…) …`), as
/// [`crate::action::Build::Definition`] takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remade {
    /// `UNIQUE`.
    pub unique: bool,
    /// What follows the name.
    pub rest: String,
}

/// The index of `definition` (as `pg_get_indexdef` writes one) made again
/// as `remake` says, over the columns of `renames` (from, to) in place of
/// the old ones; `None` when the definition is not one it reads.
pub fn index_over(definition: &str, renames: &[(&str, &str)], remake: Remake) -> Option<Remade> {
    let tokens = tokens(definition)?;
    let solid: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i], Token::Space(_)))
        .collect();
    let at = |k: usize| solid.get(k).map(|&i| &tokens[i]);
    // CREATE [UNIQUE] INDEX name ON
    let mut k = 0;
    if !at(k)?.is_keyword("create") {
        return None;
    }
    k += 1;
    let unique = at(k)?.is_keyword("unique");
    if unique {
        k += 1;
    }
    if !at(k)?.is_keyword("index") {
        return None;
    }
    let name_at = solid[k + 1];
    if !at(k + 2)?.is_keyword("on") {
        return None;
    }
    let using = (k + 3..solid.len()).find(|&j| tokens[solid[j]].is_keyword("using"))?;
    let mut out = String::new();
    let mut skip_parens: Option<i32> = None;
    for (j, &i) in solid.iter().enumerate() {
        // The table, written again as one word where asked.
        let table = j > k + 2 && j < using;
        if table && remake.on.is_some() && j > k + 3 {
            continue;
        }
        let before = if j == 0 { 0 } else { solid[j - 1] + 1 };
        for t in &tokens[before..i] {
            out.push_str(&t.text());
        }
        let token = &tokens[i];
        if i == name_at {
            // `CREATE [UNIQUE] INDEX name`: the action says it again.
            out.clear();
            continue;
        }
        if let Some(on) = remake.on.filter(|_| table) {
            out.push_str(on);
            continue;
        }
        // Storage options and the tablespace name are no columns.
        if j > using && (token.is_keyword("with") || token.is_keyword("tablespace")) {
            skip_parens = Some(if token.is_keyword("with") { 0 } else { -1 });
        }
        let column = j > using
            && skip_parens.is_none()
            && !prev_is(&tokens, &solid, j, ".")
            && !prev_is(&tokens, &solid, j, ":")
            && !next_is(&tokens, &solid, j, "(")
            && !next_is(&tokens, &solid, j, ".");
        let renamed = token
            .name()
            .filter(|_| column)
            .and_then(|n| renames.iter().find(|(from, _)| *from == n));
        match renamed {
            Some((_, to)) => out.push_str(&quote_ident(to)),
            None => out.push_str(&token.text()),
        }
        if let Some(depth) = skip_parens.as_mut() {
            match token {
                Token::Other(p) if p == "(" => *depth += 1,
                Token::Other(p) if p == ")" => {
                    *depth -= 1;
                    if *depth == 0 {
                        skip_parens = None;
                    }
                }
                Token::Word(_) | Token::Quoted(_)
                    if *depth == -1 && !token.is_keyword("tablespace") =>
                {
                    skip_parens = None;
                }
                _ => {}
            }
        }
    }
    if let Some(&last) = solid.last() {
        for t in &tokens[last + 1..] {
            out.push_str(&t.text());
        }
    }
    Some(Remade { unique, rest: out })
}

fn prev_is(tokens: &[Token], solid: &[usize], j: usize, text: &str) -> bool {
    j > 0 && matches!(&tokens[solid[j - 1]], Token::Other(t) if t == text)
}

fn next_is(tokens: &[Token], solid: &[usize], j: usize, text: &str) -> bool {
    matches!(solid.get(j + 1).map(|&i| &tokens[i]), Some(Token::Other(t)) if t == text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statement of a remade definition, named `name`.
    fn made(definition: &str, renames: &[(&str, &str)], remake: Remake, name: &str) -> String {
        let r = index_over(definition, renames, remake).unwrap();
        format!(
            "CREATE {}INDEX {}{}",
            if r.unique { "UNIQUE " } else { "" },
            quote_ident(name),
            r.rest
        )
    }

    #[test]
    fn a_column_renamed_where_it_stands_as_a_column() {
        let def = "CREATE INDEX orders_customer_id_idx ON public.orders USING btree (customer_id) WHERE (customer_id IS NOT NULL)";
        assert_eq!(
            made(def, &[("customer_id", "customer_id_new")], Remake::default(), "tmp"),
            "CREATE INDEX \"tmp\" ON public.orders USING btree (\"customer_id_new\") WHERE (\"customer_id_new\" IS NOT NULL)"
        );
    }

    #[test]
    fn columns_are_replaced_and_nothing_else() {
        let r = [("id", "id_new"), ("Kunde", "Kunde_new")];
        let def = r#"CREATE UNIQUE INDEX id ON id.id USING btree (id, "Kunde" DESC NULLS LAST) INCLUDE (n) WITH (fillfactor='90') TABLESPACE id WHERE ((id)::text <> 'id'::text) AND (lower(("Kunde")::text) = id(id))"#;
        assert_eq!(
            made(def, &r, Remake::default(), "tmp"),
            r#"CREATE UNIQUE INDEX "tmp" ON id.id USING btree ("id_new", "Kunde_new" DESC NULLS LAST) INCLUDE (n) WITH (fillfactor='90') TABLESPACE id WHERE (("id_new")::text <> 'id'::text) AND (lower(("Kunde_new")::text) = id("id_new"))"#
        );
    }

    #[test]
    fn a_definition_it_cannot_read_is_none() {
        assert!(index_over("CREATE TABLE t (id int)", &[("id", "x")], Remake::default()).is_none());
        assert!(index_over(
            "CREATE INDEX i ON t USING btree ('open",
            &[],
            Remake::default()
        )
        .is_none());
    }

    #[test]
    fn every_definition_round_trips_without_renames() {
        let def = "CREATE INDEX i ON public.t USING gist (a, b) WHERE (c > $x$y$x$::text)";
        assert_eq!(
            made(def, &[], Remake::default(), "i"),
            def.replace("INDEX i", "INDEX \"i\"")
        );
        let on = Remake {
            on: Some("\"public\".\"t_1\""),
        };
        assert_eq!(
            made(
                "CREATE UNIQUE INDEX i ON ONLY public.t USING btree (a)",
                &[],
                on,
                "i"
            ),
            "CREATE UNIQUE INDEX \"i\" ON \"public\".\"t_1\" USING btree (a)"
        );
    }
}
