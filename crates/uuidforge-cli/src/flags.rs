//! The command line's words for what the libraries name: each parameter of
//! an operation as its flag (`--also`), and the commands that complete,
//! migrate or install (`uuidforge db migrate-key T --resume`). The
//! libraries say why and which way out; this says how to type it.

use uuidforge_db::error::{DbError, Parameter, Vocabulary};

/// The flags of `uuidforge db`.
pub struct Flags;

impl Vocabulary for Flags {
    fn parameter(&self, parameter: Parameter) -> String {
        format!("--{}", parameter.name())
    }

    fn resume(&self, operation: &str, target: &str) -> String {
        format!("uuidforge db {operation} {target} --resume")
    }

    fn migrate(&self, target: &str) -> String {
        format!("uuidforge db migrate-key {target} --apply")
    }

    fn install_sql(&self) -> String {
        "uuidforge db install-sql --apply".into()
    }
}

/// `e` in the command line's words.
pub fn said(e: &DbError) -> String {
    e.rendered(&Flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuidforge_db::error::{Reason, Refusal, WayOut};

    #[test]
    fn a_refusal_says_its_ways_out_as_flags() {
        let e = DbError::refusal(
            "table",
            Refusal::new(Reason::CopiesNotNamed, "old keys copied in t.c")
                .way_out(WayOut::AsCopy {
                    column: "t.c".into(),
                })
                .way_out(WayOut::Leave {
                    column: "t.c".into(),
                }),
        );
        assert_eq!(
            said(&e),
            "table: old keys copied in t.c: rewrite its copies to the new keys in place, other values and text kept (--also t.c), or leave it as it is (--leave t.c)"
        );
        let under_way = DbError::refused("resume", "under way").with_way_out(WayOut::Resume {
            operation: "migrate-key".into(),
            target: "public.t".into(),
        });
        assert!(said(&under_way)
            .ends_with("complete it with: uuidforge db migrate-key public.t --resume"));
    }
}
