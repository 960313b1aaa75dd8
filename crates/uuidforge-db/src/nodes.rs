//! PostgreSQL's node trees as the catalog stores them (`pg_rewrite.ev_action`:
//! `({QUERY :commandType 1 :rtable (...) ...})`), read into a small tree,
//! and what a change planner asks of a view's: which columns it compares
//! with `=`, `<`, … (a join `ON a.id = b.a_id`, a `WHERE`), so that a
//! column compared with a migrated key is known before the key changes
//! type.

/// One node of the text form.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// `{NAME :field value ...}`.
    Object(String, Vec<(String, Node)>),
    /// `(a b c)` (also `(b 1 2)` bitmapsets, `(i 1 2)` integer lists) and
    /// `[ 1 0 0 0 ]` datum bytes.
    List(Vec<Node>),
    /// A token: a number, a name (`\` escapes undone), `<>` (null).
    Atom(String),
}

impl Node {
    /// The field `name` of an object.
    pub fn field(&self, name: &str) -> Option<&Node> {
        match self {
            Node::Object(_, fields) => fields.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    fn kind(&self) -> Option<&str> {
        match self {
            Node::Object(kind, _) => Some(kind),
            _ => None,
        }
    }

    fn number(&self, name: &str) -> Option<i64> {
        match self.field(name)? {
            Node::Atom(a) => a.parse().ok(),
            _ => None,
        }
    }

    fn items(&self) -> &[Node] {
        match self {
            Node::List(items) => items,
            _ => &[],
        }
    }
}

/// Reads the text form of a node tree. `None` when it is not one.
///
/// ```
/// use uuidforge_db::nodes::{parse, Node};
/// let tree = parse(r#"({VAR :varno 1 :varattno 2 :colnames ("a\ b")})"#).unwrap();
/// let var = &match &tree { Node::List(items) => items, _ => unreachable!() }[0];
/// assert_eq!(var.field("varattno"), Some(&Node::Atom("2".into())));
/// ```
pub fn parse(text: &str) -> Option<Node> {
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    let node = value(&chars, &mut at)?;
    skip_space(&chars, &mut at);
    (at == chars.len()).then_some(node)
}

fn skip_space(chars: &[char], at: &mut usize) {
    while *at < chars.len() && chars[*at].is_whitespace() {
        *at += 1;
    }
}

fn value(chars: &[char], at: &mut usize) -> Option<Node> {
    skip_space(chars, at);
    match chars.get(*at)? {
        '{' => {
            *at += 1;
            let kind = atom(chars, at);
            let mut fields = Vec::new();
            loop {
                skip_space(chars, at);
                match chars.get(*at)? {
                    '}' => {
                        *at += 1;
                        return Some(Node::Object(kind, fields));
                    }
                    ':' => {
                        *at += 1;
                        let name = atom(chars, at);
                        skip_space(chars, at);
                        // A field without a value is followed by the next
                        // field or the end of the object.
                        let v = match chars.get(*at)? {
                            ':' | '}' => Node::Atom(String::new()),
                            _ => value(chars, at)?,
                        };
                        // `:constvalue 4 [ 1 0 0 0 ]`: the length, then
                        // the bytes.
                        skip_space(chars, at);
                        let v = if chars.get(*at) == Some(&'[') {
                            let bytes = value(chars, at)?;
                            Node::List(vec![v, bytes])
                        } else {
                            v
                        };
                        fields.push((name, v));
                    }
                    _ => return None,
                }
            }
        }
        open @ ('(' | '[') => {
            let close = if *open == '(' { ')' } else { ']' };
            *at += 1;
            let mut items = Vec::new();
            loop {
                skip_space(chars, at);
                if *chars.get(*at)? == close {
                    *at += 1;
                    return Some(Node::List(items));
                }
                items.push(value(chars, at)?);
            }
        }
        '"' => {
            *at += 1;
            let mut out = String::new();
            loop {
                match chars.get(*at)? {
                    '\\' => {
                        out.push(*chars.get(*at + 1)?);
                        *at += 2;
                    }
                    '"' => {
                        *at += 1;
                        return Some(Node::Atom(out));
                    }
                    c => {
                        out.push(*c);
                        *at += 1;
                    }
                }
            }
        }
        _ => Some(Node::Atom(atom(chars, at))),
    }
}

fn atom(chars: &[char], at: &mut usize) -> String {
    skip_space(chars, at);
    let mut out = String::new();
    while let Some(&c) = chars.get(*at) {
        match c {
            '\\' => {
                if let Some(&next) = chars.get(*at + 1) {
                    out.push(next);
                }
                *at += 2;
            }
            c if c.is_whitespace() || matches!(c, '{' | '}' | '(' | ')' | '[' | ']') => break,
            c => {
                out.push(c);
                *at += 1;
            }
        }
    }
    out
}

/// A column of a table: (relation oid, column number).
pub type Col = (u32, i16);

/// The pairs of table columns a view's tree compares with an operator
/// (`a.id = b.a_id`, in a join, a `WHERE`, a subquery), each column traced
/// through joins to its table.
pub fn compared_columns(tree: &Node) -> Vec<(Col, Col)> {
    comparisons(tree, None)
        .into_iter()
        .filter_map(|(a, b)| match b {
            Operand::Column(b) => Some((a, b)),
            _ => None,
        })
        .collect()
}

/// What a column is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// Another column.
    Column(Col),
    /// A literal: its type's oid and its value as text, where it is a
    /// number, text or a uuid (`None`: another type, or NULL).
    Literal(u32, Option<String>),
    /// A list of literals (`= ANY (ARRAY[1, 2])`, `IN (1, 2)`, `NOT IN
    /// (…)`): each element's type oid and value as [`Operand::Literal`]
    /// has them.
    Literals(Vec<(u32, Option<String>)>),
    /// Another list (a subquery's, an array computed at run time).
    List,
    /// A value computed without any column: a setting, a parameter, a
    /// function of literals.
    Computed,
    /// An expression over columns.
    Expression,
}

/// Every comparison (`=`, `<>`, `<`, … and `= ANY`) of a table column
/// with something in `tree`: the column, and what it is compared with.
/// `relation` is the table whose columns an expression's variables name
/// (a CHECK's, a policy's); a view's query names its own.
pub fn comparisons(tree: &Node, relation: Option<u32>) -> Vec<(Col, Operand)> {
    // An expression's variables name the relation as 1 (a rule's `WHERE`
    // names it as OLD, 1, and NEW, 2).
    let own = relation.map(|oid| {
        let entry = Node::Object(
            "RANGETBLENTRY".into(),
            vec![
                ("rtekind".into(), Node::Atom("0".into())),
                ("relid".into(), Node::Atom(oid.to_string())),
            ],
        );
        Node::List(vec![entry.clone(), entry])
    });
    let mut scopes: Vec<&[Node]> = own.iter().map(Node::items).collect();
    let mut out = Vec::new();
    walk(tree, &mut scopes, &mut out);
    out
}

fn walk<'a>(node: &'a Node, scopes: &mut Vec<&'a [Node]>, out: &mut Vec<(Col, Operand)>) {
    match node {
        Node::Object(kind, fields) => {
            let query = kind == "QUERY";
            if query {
                scopes.push(node.field("rtable").map_or(&[][..], Node::items));
            }
            // A comparison gives a boolean (16); `account_id + 1` does not.
            let boolean = node.number("opresulttype").is_none_or(|t| t == 16);
            if (kind == "OPEXPR" && boolean) || kind == "SCALARARRAYOPEXPR" {
                if let [a, b] = node.field("args").map_or(&[][..], Node::items) {
                    let list = kind == "SCALARARRAYOPEXPR";
                    match (column(a, scopes), column(b, scopes)) {
                        (Some(a), Some(b)) => out.push((a, Operand::Column(b))),
                        (Some(a), None) => out.push((a, operand(b, list))),
                        (None, Some(b)) if !list => out.push((b, operand(a, false))),
                        _ => {}
                    }
                }
            }
            for (_, v) in fields {
                walk(v, scopes, out);
            }
            if query {
                scopes.pop();
            }
        }
        Node::List(items) => {
            for item in items {
                walk(item, scopes, out);
            }
        }
        Node::Atom(_) => {}
    }
}

/// What a stored expression on its own is (a column's default, `adbin`):
/// a literal (`Literal(type, None)` for NULL or a literal of another
/// type), a value computed without any column, or an expression over
/// columns. `None` for a NULL literal.
///
/// ```
/// use uuidforge_db::nodes::{parse, value_of, Operand};
/// let one = parse("{CONST :consttype 20 :constlen 8 :constbyval true :constisnull false :constvalue 8 [ 1 0 0 0 0 0 0 0 ]}").unwrap();
/// assert_eq!(value_of(&one), Some(Operand::Literal(20, Some("1".into()))));
/// let null = parse("{CONST :consttype 20 :constlen 8 :constbyval true :constisnull true :constvalue <>}").unwrap();
/// assert_eq!(value_of(&null), None);
/// let setting = parse("{FUNCEXPR :funcid 2077 :funcformat 0 :args ({CONST :consttype 25 :constisnull false})}").unwrap();
/// assert_eq!(value_of(&setting), Some(Operand::Computed));
/// ```
pub fn value_of(tree: &Node) -> Option<Operand> {
    let mut node = tree;
    // `NULL::bigint` is stored as a NULL literal, possibly under a cast.
    while let Some("RELABELTYPE" | "COERCETODOMAIN") = node.kind() {
        node = node.field("arg")?;
    }
    if node.kind() == Some("CONST") && node.field("constisnull") == Some(&Node::Atom("true".into()))
    {
        return None;
    }
    Some(operand(tree, false))
}

/// What a column is compared with, when it is not a column.
fn operand(node: &Node, list: bool) -> Operand {
    if list {
        return literals(node).map_or(Operand::List, Operand::Literals);
    }
    match node.kind() {
        Some("RELABELTYPE") => {
            return node
                .field("arg")
                .map_or(Operand::Expression, |a| operand(a, false))
        }
        Some("FUNCEXPR") if node.number("funcformat") == Some(2) => {
            if let [only] = node.field("args").map_or(&[][..], Node::items) {
                return operand(only, false);
            }
        }
        Some("CONST") => {
            let type_oid = node
                .number("consttype")
                .and_then(|t| u32::try_from(t).ok())
                .unwrap_or(0);
            return Operand::Literal(type_oid, literal(node, type_oid));
        }
        _ => {}
    }
    if uses_columns(node) {
        Operand::Expression
    } else {
        Operand::Computed
    }
}

/// The elements of an `ARRAY[…]` of literals, each as a literal; none
/// when an element is anything else.
fn literals(node: &Node) -> Option<Vec<(u32, Option<String>)>> {
    if node.kind() != Some("ARRAYEXPR") {
        return None;
    }
    node.field("elements")?
        .items()
        .iter()
        .map(|e| match operand(e, false) {
            Operand::Literal(t, v) => Some((t, v)),
            _ => None,
        })
        .collect()
}

/// Whether a value depends on rows: a column, a subquery, or a subquery's
/// output as its test compares it (`x IN (SELECT …)`: a `PARAM` of kind
/// 2).
fn uses_columns(node: &Node) -> bool {
    match node {
        Node::Object(kind, fields) => {
            kind == "VAR"
                || kind == "SUBLINK"
                || (kind == "PARAM" && node.number("paramkind") == Some(2))
                || fields.iter().any(|(_, v)| uses_columns(v))
        }
        Node::List(items) => items.iter().any(uses_columns),
        Node::Atom(_) => false,
    }
}

/// A literal's value as text, from the datum's bytes the tree holds (in
/// the server's byte order, little-endian on every platform PostgreSQL
/// packages ship for here): integers, text and uuids.
fn literal(node: &Node, type_oid: u32) -> Option<String> {
    if node.field("constisnull") != Some(&Node::Atom("false".into())) {
        return None;
    }
    let bytes: Vec<u8> = match node.field("constvalue")?.items() {
        [_, Node::List(bytes)] => bytes
            .iter()
            .map(|b| match b {
                Node::Atom(a) => a.parse::<i16>().ok().map(|v| v as u8),
                _ => None,
            })
            .collect::<Option<_>>()?,
        _ => return None,
    };
    match type_oid {
        // int2, int4, int8: a Datum, its low bytes first.
        21 | 23 | 20 => {
            let width = usize::try_from(node.number("constlen")?).ok()?;
            let mut value = [0u8; 8];
            value[..width].copy_from_slice(bytes.get(..width)?);
            let raw = i64::from_le_bytes(value);
            let shift = 64 - 8 * width as u32;
            Some(((raw << shift) >> shift).to_string())
        }
        // text, varchar, bpchar: a varlena, its header 1 byte (low bit
        // set) or 4.
        25 | 1043 | 1042 => {
            let body = if bytes.first()? & 1 == 1 {
                bytes.get(1..)?
            } else {
                bytes.get(4..)?
            };
            String::from_utf8(body.to_vec()).ok()
        }
        2950 => {
            let b: [u8; 16] = bytes.get(..16)?.try_into().ok()?;
            Some(
                b.iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let dash = if matches!(i, 4 | 6 | 8 | 10) { "-" } else { "" };
                        format!("{dash}{x:02x}")
                    })
                    .collect(),
            )
        }
        _ => None,
    }
}

/// The table column an operand is: a `VAR` (through an implicit cast or a
/// binary-compatible relabel), traced through join aliases.
fn column(node: &Node, scopes: &[&[Node]]) -> Option<Col> {
    match node.kind()? {
        "RELABELTYPE" => column(node.field("arg")?, scopes),
        // COERCE_IMPLICIT_CAST: `int4 = int8` compared after a cast.
        "FUNCEXPR" if node.number("funcformat") == Some(2) => match node.field("args")?.items() {
            [only] => column(only, scopes),
            _ => None,
        },
        "VAR" => {
            let up = usize::try_from(node.number("varlevelsup")?).ok()?;
            let rtable = scopes.get(scopes.len().checked_sub(1 + up)?)?;
            let varno = usize::try_from(node.number("varno")?).ok()?;
            let attno = node.number("varattno")?;
            let rte = rtable.get(varno.checked_sub(1)?)?;
            match rte.number("rtekind")? {
                0 => Some((
                    u32::try_from(rte.number("relid")?).ok()?,
                    i16::try_from(attno).ok()?,
                )),
                // A join's column is one of its inputs'.
                2 => {
                    let aliased = rte.field("joinaliasvars")?.items();
                    let var = aliased.get(usize::try_from(attno).ok()?.checked_sub(1)?)?;
                    let inner = &scopes[..scopes.len() - up];
                    column(var, inner)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_lists_and_empty_fields_parse() {
        let tree = parse(r#"({QUERY :utilityStmt <> :rtable ({RANGETBLENTRY :eref {ALIAS :aliasname a\ b :colnames ("x" "y\"z")} :rtekind 0 :relid 7 :selectedCols (b 8 9)}) :x :constvalue 4 [ 1 0 0 0 ]})"#).unwrap();
        let q = &tree.items()[0];
        let rte = &q.field("rtable").unwrap().items()[0];
        assert_eq!(rte.number("relid"), Some(7));
        let alias = rte.field("eref").unwrap();
        assert_eq!(alias.field("aliasname"), Some(&Node::Atom("a b".into())));
        assert_eq!(
            alias.field("colnames").unwrap().items()[1],
            Node::Atom("y\"z".into())
        );
        assert_eq!(q.field("x"), Some(&Node::Atom(String::new())));
        assert!(parse("({QUERY").is_none());
    }

    #[test]
    fn literals_settings_and_lists_compared_with_a_column() {
        // As PostgreSQL 15 stores `CHECK (id <> 1)`, `CHECK (code <> 'x')`
        // (code varchar), `id <> -2`, `id = current_setting('x')::bigint`
        // and `id IN (1, 2)`, each over relation 7.
        let checks = [
            r#"{OPEXPR :opno 417 :args ({VAR :varno 1 :varattno 1 :vartype 20 :varlevelsup 0} {CONST :consttype 23 :constlen 4 :constbyval true :constisnull false :constvalue 4 [ 1 0 0 0 0 0 0 0 ]})}"#,
            r#"{OPEXPR :opno 531 :args ({RELABELTYPE :arg {VAR :varno 1 :varattno 2 :varlevelsup 0} :resulttype 25} {CONST :consttype 25 :constlen -1 :constbyval false :constisnull false :constvalue 5 [ 20 0 0 0 120 ]})}"#,
            r#"{OPEXPR :args ({CONST :consttype 20 :constlen 8 :constbyval true :constisnull false :constvalue 8 [ -2 -1 -1 -1 -1 -1 -1 -1 ]} {VAR :varno 1 :varattno 1 :varlevelsup 0})}"#,
            r#"{OPEXPR :args ({VAR :varno 1 :varattno 1 :varlevelsup 0} {FUNCEXPR :funcformat 1 :args ({FUNCEXPR :funcformat 0 :args ({CONST :consttype 25 :constisnull false})})})}"#,
            r#"{SCALARARRAYOPEXPR :args ({VAR :varno 1 :varattno 1 :varlevelsup 0} {ARRAYEXPR :elements ({CONST :consttype 20} {CONST :consttype 20})})}"#,
            r#"{SCALARARRAYOPEXPR :args ({VAR :varno 1 :varattno 1 :varlevelsup 0} {ARRAYEXPR :elements ({FUNCEXPR :funcformat 2 :args ({CONST :consttype 23 :constlen 4 :constbyval true :constisnull false :constvalue 4 [ 1 0 0 0 0 0 0 0 ]})} {CONST :consttype 20 :constlen 8 :constbyval true :constisnull false :constvalue 8 [ 2 0 0 0 0 0 0 0 ]})})}"#,
            r#"{SCALARARRAYOPEXPR :args ({VAR :varno 1 :varattno 1 :varlevelsup 0} {SUBLINK :subLinkType 2})}"#,
            r#"{OPEXPR :args ({VAR :varno 1 :varattno 1 :varlevelsup 0} {CONST :consttype 2950 :constlen 16 :constbyval false :constisnull false :constvalue 16 [ 1 -115 -1 -94 -98 -89 115 -58 -115 -22 -125 -18 -36 101 -63 -109 ]})}"#,
        ];
        let found: Vec<(Col, Operand)> = checks
            .iter()
            .flat_map(|c| comparisons(&parse(c).unwrap(), Some(7)))
            .collect();
        assert_eq!(
            found,
            [
                ((7, 1), Operand::Literal(23, Some("1".into()))),
                ((7, 2), Operand::Literal(25, Some("x".into()))),
                ((7, 1), Operand::Literal(20, Some("-2".into()))),
                ((7, 1), Operand::Computed),
                ((7, 1), Operand::Literals(vec![(20, None), (20, None)])),
                (
                    (7, 1),
                    Operand::Literals(vec![(23, Some("1".into())), (20, Some("2".into()))])
                ),
                ((7, 1), Operand::List),
                (
                    (7, 1),
                    Operand::Literal(2950, Some("018dffa2-9ea7-73c6-8dea-83eedc65c193".into()))
                ),
            ]
        );
    }

    #[test]
    fn comparisons_through_joins_casts_and_subqueries() {
        // a(1) JOIN b(2) ON a.id = b.x; WHERE a.n = b.x (through the join
        // RTE 3); a subquery comparing its own b.x with the outer a.id.
        let var = |no: u32, att: i16, up: u32| {
            format!("{{VAR :varno {no} :varattno {att} :varlevelsup {up}}}")
        };
        let rte = |relid: u32| format!("{{RANGETBLENTRY :rtekind 0 :relid {relid}}}");
        let tree = format!(
            "({{QUERY :rtable ({a} {b} {{RANGETBLENTRY :rtekind 2 :joinaliasvars ({v11} {v12} {v21})}}) \
              :jointree {{FROMEXPR :quals ({{OPEXPR :args ({v11} {v21})}} {{OPEXPR :args ({{RELABELTYPE :arg {v32}}} {{FUNCEXPR :funcformat 2 :args ({v33})}})}} \
              {{SUBLINK :subselect {{QUERY :rtable ({b}) :jointree {{FROMEXPR :quals {{OPEXPR :args ({v11} {outer})}}}}}}}} \
              {{OPEXPR :args ({{FUNCEXPR :funcformat 0 :args ({v11})}} {v21})}})}}}})",
            a = rte(100),
            b = rte(200),
            v11 = var(1, 1, 0),
            v12 = var(1, 2, 0),
            v21 = var(2, 1, 0),
            v32 = var(3, 2, 0),
            v33 = var(3, 3, 0),
            outer = var(1, 1, 1),
        );
        let pairs = compared_columns(&parse(&tree).unwrap());
        assert_eq!(
            pairs,
            [
                ((100, 1), (200, 1)),
                ((100, 2), (200, 1)),
                ((200, 1), (100, 1))
            ],
            "an explicit cast (funcformat 0) is a computed value, not the column"
        );
    }
}
