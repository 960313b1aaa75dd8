//! The swap of a batched migration (one short transaction, writers locked
//! out): triggers dropped, keys and constraints moved to the prebuilt
//! indexes, columns renamed, foreign keys and CHECK constraints made again
//! `NOT VALID`; with the validations and attachments that follow it.

use super::{leaf_constraint_name, Ctx};
use uuidforge_db::error::DbError;
use uuidforge_ident::quote_ident;
use uuidforge_db::introspect::{create_views, drop_views};
use crate::ops::key::{by_column, cut, cut_to, names, new_column, old_reference, piece, temporary};

/// The statements of the swap and of the steps after it.
pub(super) struct Swapped {
    /// The swap.
    pub swap: Vec<String>,
    /// Foreign keys and checks validated, writers going on.
    pub validate: Vec<String>,
    /// Partitions' own foreign keys made again once their table's has
    /// attached its partitions' copies.
    pub attach: Vec<String>,
    /// Those validated.
    pub validate_partitions: Vec<String>,
}

/// The swap and what follows it.
pub(super) fn swap(ctx: &Ctx) -> Result<Swapped, DbError> {
    let m = ctx.m;
    let mut s = vec!["SET CONSTRAINTS ALL IMMEDIATE".to_string()];
    s.extend(drop_views(&m.views));
    for (table, _) in &ctx.tables {
        s.push(format!(
            "DROP TRIGGER uuidforge_migrate ON {}",
            table.sql_name()
        ));
        s.push(format!("DROP FUNCTION {}()", ctx.function(table.oid)));
    }
    for r in m.references.iter().filter(|r| r.fk.is_some()) {
        s.push(format!(
            "ALTER TABLE {} DROP CONSTRAINT {}",
            r.declared_on.sql_name(),
            quote_ident(&r.constraint_name())
        ));
    }
    s.extend(m.drop_dependents());
    s.extend(swap_key(ctx));
    let mut after = Swapped {
        swap: s,
        validate: Vec::new(),
        attach: Vec::new(),
        validate_partitions: Vec::new(),
    };
    rename_references(ctx, &mut after);
    // Keys and unique constraints before the foreign keys that may
    // reference them.
    remake_dependents(ctx, &mut after)?;
    foreign_keys(ctx, &mut after);
    after.swap.extend(m.column_extras());
    after.swap.extend(create_views(&m.views, &m.snapshot.user));
    Ok(after)
}

/// The key moved to the prebuilt index, the columns renamed, the default
/// `uuidv7()`.
fn swap_key(ctx: &Ctx) -> Vec<String> {
    let Ctx { m, t, k, kn, .. } = ctx;
    let old = quote_ident(&m.old_name);
    let pk_name = quote_ident(&m.key.pk.name);
    let new_key_index = ctx.new_key_index();
    let mut s = vec![format!("ALTER TABLE {t} DROP CONSTRAINT {pk_name}")];
    // Apart: one ALTER TABLE would drop the check before the NOT NULL
    // verification could use it, and scan the table under the lock.
    s.push(format!("ALTER TABLE {t} ALTER COLUMN {kn} SET NOT NULL"));
    s.push(format!(
        "ALTER TABLE {t} DROP CONSTRAINT {}",
        ctx.not_null_check(m.key.table.oid, &m.key.column.name)
    ));
    let leaves = ctx.leaves_of(m.key.table);
    if leaves.is_empty() {
        s.push(format!(
            "ALTER TABLE {t} ADD CONSTRAINT {pk_name} PRIMARY KEY USING INDEX {}",
            quote_ident(&new_key_index)
        ));
    } else {
        // Each partition's key on its prebuilt index (keeping its name),
        // then the table's, which attaches them (no index is built under
        // the lock).
        let named = m.key_leaves();
        for p in &leaves {
            let name = named
                .iter()
                .find(|l| l.partition == p.oid)
                .map_or_else(|| piece(&m.key.pk.name, p.oid), |l| l.name.clone());
            s.push(format!(
                "ALTER TABLE {} ADD CONSTRAINT {} PRIMARY KEY USING INDEX {}",
                p.sql_name(),
                quote_ident(&name),
                quote_ident(&piece(&new_key_index, p.oid))
            ));
        }
        s.push(format!(
            "ALTER TABLE {t} ADD CONSTRAINT {pk_name} PRIMARY KEY ({})",
            names(&m.key.pk_with(&new_column(&m.key.column.name)))
        ));
        s.push(format!(
            "CREATE UNIQUE INDEX {} ON {t} ({})",
            quote_ident(&super::super::one_transaction::old_index_name(m)),
            names(&m.key.pk_columns())
        ));
    }
    s.extend(super::super::one_transaction::drop_key_default(m));
    s.push(format!("ALTER TABLE {t} RENAME COLUMN {k} TO {old}"));
    s.push(format!("ALTER TABLE {t} ALTER COLUMN {old} DROP NOT NULL"));
    s.push(format!("ALTER TABLE {t} RENAME COLUMN {kn} TO {k}"));
    if let Some(generator) = &m.generator {
        s.push(format!(
            "ALTER TABLE {t} ALTER COLUMN {k} SET DEFAULT {}",
            generator.call()
        ));
    }
    s
}

/// The referencing columns renamed.
fn rename_references(ctx: &Ctx, after: &mut Swapped) {
    let m = ctx.m;
    for r in by_column(&m.references) {
        let ct = r.table.sql_name();
        let c = quote_ident(&r.column.name);
        let cn = quote_ident(&new_column(&r.column.name));
        let c_old = quote_ident(&old_reference(&r.column.name));
        after
            .swap
            .push(format!("ALTER TABLE {ct} RENAME COLUMN {c} TO {c_old}"));
        after
            .swap
            .push(format!("ALTER TABLE {ct} RENAME COLUMN {cn} TO {c}"));
        if r.column.not_null {
            after
                .swap
                .push(format!("ALTER TABLE {ct} ALTER COLUMN {c} SET NOT NULL"));
            after.swap.push(format!(
                "ALTER TABLE {ct} DROP CONSTRAINT {}, ALTER COLUMN {c_old} DROP NOT NULL",
                ctx.not_null_check(r.table.oid, &r.column.name)
            ));
        }
    }
}

/// The foreign keys made again `NOT VALID` (validated after the swap).
fn foreign_keys(ctx: &Ctx, after: &mut Swapped) {
    let m = ctx.m;
    for r in m.references.iter().filter(|r| r.declared_on_table()) {
        let Some(fk) = r.fk else { continue };
        let ct = r.table.sql_name();
        let clause = r.fk_clause(&m.key);
        let leaves = ctx.leaves_of(r.table);
        if leaves.is_empty() {
            after.swap.push(format!(
                "ALTER TABLE {ct} ADD CONSTRAINT {} {clause} NOT VALID",
                quote_ident(&fk.name)
            ));
            after.validate.push(format!(
                "ALTER TABLE {ct} VALIDATE CONSTRAINT {}",
                quote_ident(&fk.name)
            ));
            continue;
        }
        // PostgreSQL 15 makes no NOT VALID foreign key on a partitioned
        // table: each partition gets one, validated after the swap, and the
        // table's then attaches them.
        for p in leaves {
            let name = quote_ident(&cut(&format!("{}_{}", cut_to(&fk.name, 50), p.oid)));
            after.swap.push(format!(
                "ALTER TABLE {} ADD CONSTRAINT {name} {clause} NOT VALID",
                p.sql_name()
            ));
            after.validate.push(format!(
                "ALTER TABLE {} VALIDATE CONSTRAINT {name}",
                p.sql_name()
            ));
        }
        after.attach.push(format!(
            "ALTER TABLE {ct} ADD CONSTRAINT {} {clause}",
            quote_ident(&fk.name)
        ));
    }
    // Each partition's own foreign key, made again on it `NOT VALID` and
    // validated after the partitioned tables' foreign keys have attached
    // their partitions' copies. Where its table has one too, it is made
    // after that attachment (which would otherwise take it in their place:
    // PostgreSQL 18 attaches a not yet valid one as well), the table's
    // foreign key holding meanwhile; else in the swap.
    for r in m.references.iter().filter(|r| r.on_partition()) {
        let Some(fk) = r.fk else { continue };
        let table_has_one = m.references.iter().any(|o| {
            o.declared_on_table() && o.table.oid == r.table.oid && o.column.num == r.column.num
        });
        let add = format!(
            "ALTER TABLE {} ADD CONSTRAINT {} {} NOT VALID",
            r.declared_on.sql_name(),
            quote_ident(&fk.name),
            r.fk_clause(&m.key)
        );
        if table_has_one {
            after.attach.push(add);
        } else {
            after.swap.push(add);
        }
        after.validate_partitions.push(format!(
            "ALTER TABLE {} VALIDATE CONSTRAINT {}",
            r.declared_on.sql_name(),
            quote_ident(&fk.name)
        ));
    }
}

/// Every index and constraint over a changed column made again on the new
/// column: an index under its prebuilt temporary name renamed (a
/// partitioned table's made again from its definition, attaching the
/// prebuilt pieces, their names given back), a key or unique constraint on
/// its prebuilt index, a CHECK `NOT VALID` and validated after; each with
/// its comment.
fn remake_dependents(ctx: &Ctx, after: &mut Swapped) -> Result<(), DbError> {
    let m = ctx.m;
    for i in &m.dependents.indexes {
        let table = m
            .snapshot
            .relation(i.table)
            .ok_or_else(|| DbError::unreadable("index", "table not found"))?;
        let leaves = ctx.leaves_of(table);
        if leaves.is_empty() {
            after.swap.push(format!(
                "ALTER INDEX {} RENAME TO {}",
                uuidforge_ident::qualified(&table.schema, &temporary(&i.name)),
                quote_ident(&i.name)
            ));
        } else {
            after.swap.push(i.definition.clone());
            for p in &leaves {
                if let Some(leaf) = i.leaves.iter().find(|l| l.partition == p.oid) {
                    after.swap.push(format!(
                        "ALTER INDEX {} RENAME TO {}",
                        uuidforge_ident::qualified(&p.schema, &piece(&temporary(&i.name), p.oid)),
                        quote_ident(&leaf.name)
                    ));
                }
            }
        }
        after.swap.extend(i.comment_sql());
    }
    for c in &m.dependents.constraints {
        let table = m
            .snapshot
            .relation(c.table)
            .ok_or_else(|| DbError::unreadable("constraint", "table not found"))?;
        let ct = table.sql_name();
        let name = quote_ident(&c.name);
        let deferrable = match (c.deferrable, c.deferred) {
            (false, _) => "",
            (true, false) => " DEFERRABLE INITIALLY IMMEDIATE",
            (true, true) => " DEFERRABLE INITIALLY DEFERRED",
        };
        let kind = if c.kind == "p" {
            "PRIMARY KEY"
        } else {
            "UNIQUE"
        };
        match c.kind.as_str() {
            "c" => {
                let definition = c.definition.trim_end_matches(" NOT VALID");
                after.swap.push(format!(
                    "ALTER TABLE {ct} ADD CONSTRAINT {name} {definition} NOT VALID"
                ));
                if c.validated {
                    after
                        .validate
                        .push(format!("ALTER TABLE {ct} VALIDATE CONSTRAINT {name}"));
                }
            }
            _ => {
                let leaves = ctx.leaves_of(table);
                if leaves.is_empty() {
                    after.swap.push(format!(
                        "ALTER TABLE {ct} ADD CONSTRAINT {name} {kind} USING INDEX {}{deferrable}",
                        quote_ident(&temporary(&c.name))
                    ));
                } else {
                    for p in &leaves {
                        after.swap.push(format!(
                            "ALTER TABLE {} ADD CONSTRAINT {} {kind} USING INDEX {}{deferrable}",
                            p.sql_name(),
                            quote_ident(&leaf_constraint_name(c, p)),
                            quote_ident(&piece(&temporary(&c.name), p.oid))
                        ));
                    }
                    after.swap.push(format!(
                        "ALTER TABLE {ct} ADD CONSTRAINT {name} {}",
                        c.definition
                    ));
                }
            }
        }
        after.swap.extend(c.comment_sql(&ct));
    }
    Ok(())
}
