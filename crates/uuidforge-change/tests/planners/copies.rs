//! The `copies` catalog: copies of a uuid key outside its references,
//! found in every form the search reads, refused until each is named, and
//! rewritten in place when named as copies.

use crate::case;
use crate::catalogs::{sql_of, summary_of};
use uuidforge_db::error::{ErrorKind, Reason};

case!(
    migrate_services,
    "copies",
    "migrate services",
    |plan, _c| {
        let e = plan.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Refused, "{e}");
        for named in [
            "\"public\".\"tags\".entity_id (uuid: 2 rows)",
            "\"public\".\"tags\".tags (text[]: 1 rows, inside the value)",
            "\"public\".\"plugins\".cache_key (text: 1 rows, 1 of them inside longer text)",
            "\"public\".\"plugins\".config (jsonb: 1 rows, inside the value)",
            "\"public\".\"plugins\".service_ids (uuid[]: 1 rows, inside the value)",
            "\"public\".\"plugins\".note (json: 1 rows, inside the value)",
            "\"public\".\"plugins\".aliases (text[]: 1 rows, inside the value)",
            "\"audit\".\"events\".subject (text: 1 rows, 1 of them inside longer text)",
        ] {
            assert!(e.message.contains(named), "'{named}' not in {e}");
        }
        assert!(!e.message.contains("routes"), "{e}");
    }
);

case!(
    migrate_services_naming_every_copy,
    "copies",
    "migrate services naming every copy",
    |plan, _c| {
        let m = plan.unwrap();
        let sql = sql_of(&m);
        assert!(
            sql.contains("CREATE OR REPLACE FUNCTION pg_temp.uuidforge_new_keys_in(value text)"),
            "{sql}"
        );
        for table in [
            "\"public\".\"tags\"",
            "\"public\".\"plugins\"",
            "\"audit\".\"events\"",
        ] {
            assert!(
                sql.contains(&format!("UPDATE {table} AS x SET")),
                "{table}: {sql}"
            );
        }
        assert!(
            sql.contains("old keys left in \"public\".\"plugins\".cache_key"),
            "{sql}"
        );
        // Bytes, a uuid192 over the key with its segment, a composite's field.
        for expected in [
            "SET \"service_bytes\" = uuid_send(m.new) FROM uuidforge_keymap m WHERE length(x.\"service_bytes\") = 16",
            "WHEN 0 THEN \"public\".uuid192(m.new, \"public\".uuid192_payload(x.\"service_wide\"))",
            "SET \"ref\".\"service\" = m.new FROM uuidforge_keymap m WHERE m.old = (x.\"ref\").\"service\"::text",
            "old keys left in \"billing\".\"charges\".service_wide",
        ] {
            assert!(sql.contains(expected), "lacks {expected}:\n{sql}");
        }
    }
);

case!(
    migrate_services_leaving_some,
    "copies",
    "migrate services leaving some",
    |plan, _c| {
        let sql = sql_of(&plan.unwrap());
        assert!(
            sql.contains("UPDATE \"public\".\"tags\" AS x SET \"entity_id\" = m.new"),
            "{sql}"
        );
        assert!(!sql.contains("SET \"config\""), "{sql}");
    }
);

case!(
    migrate_services_naming_the_copies_in_text_only,
    "copies",
    "migrate services naming the copies in text only",
    |plan, _c| {
        let e = crate::catalogs::refused(
            plan,
            Reason::CopiesNotNamed,
            &["as bytes, uuid192 or composite values"],
        );
        for named in [
            "\"billing\".\"charges\".service_bytes (bytea: 1 rows, the key in its 16 bytes)",
            "\"billing\".\"charges\".service_wide (uuid192: 2 rows, the key in its 16 bytes)",
            "\"billing\".\"charges\".ref (composite: 1 rows, inside the value)",
        ] {
            assert!(e.message.contains(named), "'{named}' not in {e}");
        }
        assert!(!e.message.contains("other"), "{e}");
    }
);

case!(
    batched_services_naming_every_copy,
    "copies",
    "batched services naming every copy",
    |plan, _c| {
        let e = plan.unwrap_err();
        assert!(
            e.message
                .contains("rewritten in place in one transaction only"),
            "{e}"
        );
    }
);

case!(
    migrate_services_searching_public_only,
    "copies",
    "migrate services searching public only",
    |plan, _c| {
        let m = plan.unwrap();
        assert!(
            summary_of(&m).iter().any(|l| l.contains("(public)")),
            "{:?}",
            summary_of(&m)
        );
        assert!(!sql_of(&m).contains("\"audit\".\"events\" AS x"));
    }
);

case!(
    migrate_services_without_the_search,
    "copies",
    "migrate services without the search",
    |plan, _c| {
        let m = plan.unwrap();
        assert!(
            summary_of(&m).iter().any(|l| l.contains("not searched")),
            "{:?}",
            summary_of(&m)
        );
    }
);
