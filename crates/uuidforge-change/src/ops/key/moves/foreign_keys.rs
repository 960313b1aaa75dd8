//! The foreign keys to the key, made again over the new columns.

use super::Move;
use crate::action::{Action, Constraint};
use crate::ops::key::{cut, cut_to, Migration};

impl Migration<'_> {
    /// The foreign keys made again over the new columns, with their
    /// actions and deferrability: in batches `NOT VALID` and validated
    /// after the swap. PostgreSQL 15 makes no `NOT VALID` foreign key on a
    /// partitioned table: each partition gets one, validated after the
    /// swap, and the table's then attaches them. A partition's own foreign
    /// key is made again on it `NOT VALID` and validated after the
    /// partitioned tables' have attached their partitions' copies; where
    /// its table has one too, it is made after that attachment (which
    /// would otherwise take it in their place: PostgreSQL 18 attaches a
    /// not yet valid one as well), the table's foreign key holding
    /// meanwhile.
    pub(super) fn foreign_key_moves(&self) -> Vec<Move> {
        let mut moves = Vec::new();
        for r in self.references.iter().filter(|r| r.fk.is_some()) {
            let Some(fk) = r.fk else { continue };
            let clause = r.fk_clause(&self.key);
            let on = r.declared_on.sql_name();
            let add = |table: String, name: String, not_valid: bool| {
                Action::Constraint(Constraint::Add {
                    table,
                    name,
                    definition: clause.clone(),
                    not_valid,
                })
            };
            let validate = |table: String, name: String| {
                Action::Constraint(Constraint::Validate { table, name })
            };
            let mut m = Move {
                at_once: vec![add(on.clone(), fk.name.clone(), false)],
                ..Move::default()
            };
            if r.declared_on_table() {
                let leaves = self.leaves_of(r.table);
                if leaves.is_empty() {
                    m.swap.push(add(on.clone(), fk.name.clone(), true));
                    m.validate.push(validate(on, fk.name.clone()));
                } else {
                    for p in leaves {
                        let name = cut(&format!("{}_{}", cut_to(&fk.name, 50), p.oid));
                        m.swap.push(add(p.sql_name(), name.clone(), true));
                        m.validate.push(validate(p.sql_name(), name));
                    }
                    m.attach.push(add(on, fk.name.clone(), false));
                }
            } else {
                let table_has_one = self.references.iter().any(|o| {
                    o.declared_on_table()
                        && o.table.oid == r.table.oid
                        && o.column.num == r.column.num
                });
                let made = add(on.clone(), fk.name.clone(), true);
                if table_has_one {
                    m.attach.push(made);
                } else {
                    m.swap.push(made);
                }
                m.validate_attached.push(validate(on, fk.name.clone()));
            }
            moves.push(m);
        }
        moves
    }
}
