//! The `publications` and `all_tables` catalogs: tables a migration writes
//! that publications publish, in each mode.

use crate::case;
use crate::catalogs::{sql_of, summary_of};

case!(
    migrate_accounts,
    "publications",
    "migrate accounts",
    |plan, _c| {
        let m = plan.unwrap();
        let sql = sql_of(&m);
        for expected in [
            "ALTER PUBLICATION \"feed\" SET (publish = '')",
            "REPLICA IDENTITY FULL",
            "REPLICA IDENTITY USING INDEX \"documents_title_key\"",
            "ALTER PUBLICATION \"titles\" SET (publish = 'insert, update')",
        ] {
            assert!(sql.contains(expected), "lacks {expected}:\n{sql}");
        }
        assert!(summary_of(&m).iter().any(|l| l.contains("publication feed publishes public.accounts, public.documents")), "{:?}", summary_of(&m));
    }
);

case!(
    batched_accounts,
    "publications",
    "batched accounts",
    |plan, _c| {
        let sql = sql_of(&plan.unwrap());
        // Published with their own columns only until the swap.
        assert!(
            sql.contains("ALTER PUBLICATION \"feed\" ADD TABLE public.accounts (id, name)"),
            "{sql}"
        );
    }
);

case!(
    migrate_books,
    "publications",
    "migrate books",
    |plan, _c| {
        let m = plan.unwrap();
        assert!(
            summary_of(&m)
                .iter()
                .any(|l| l.contains("publication ledgers publishes")),
            "{:?}",
            summary_of(&m)
        );
    }
);

case!(
    batched_books,
    "publications",
    "batched books",
    |plan, _c| {
        let m = plan.unwrap();
        assert!(
            summary_of(&m).iter().any(
                |l| l.contains("WARNING: in batches the columns the change adds are published")
            ),
            "{:?}",
            summary_of(&m)
        );
    }
);

case!(
    migrate_all_accounts,
    "all_tables",
    "migrate accounts",
    |plan, _c| {
        let sql = sql_of(&plan.unwrap());
        assert!(
            sql.contains("ALTER PUBLICATION \"everything\" SET (publish = '')"),
            "{sql}"
        );
    }
);

case!(
    batched_all_accounts,
    "all_tables",
    "batched accounts",
    |plan, _c| {
        let m = plan.unwrap();
        assert!(
            summary_of(&m)
                .iter()
                .any(|l| l.contains("publication everything publishes") && l.contains("WARNING")),
            "{:?}",
            summary_of(&m)
        );
    }
);
