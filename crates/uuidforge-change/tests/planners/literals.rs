//! The `literals` catalog: old keys written as literals in definitions,
//! made again with the new keys of their rows read from the key map; and
//! what no key map translates, refused by name.

use crate::case;
use crate::catalogs::sql_of;
use uuidforge_db::error::{DbError, ErrorKind};

fn refused(plan: Result<uuidforge_change::ops::ChangePlan, DbError>, words: &[&str]) {
    let e = plan.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused, "{e}");
    for w in words {
        assert!(e.to_string().contains(w), "'{w}' not in {e}");
    }
}

case!(
    migrate_accounts,
    "literals",
    "migrate accounts",
    |plan, _c| {
        let m = plan.unwrap();
        for line in [
        "constraint various: id compared with the old key 1, made again with the new key of that row",
        "view public.first_account: account_id compared with the old key 1",
        "policy hide_second on table documents: account_id compared with the old key 2",
        "index public.one_title_elsewhere: account_id compared with the old key 1",
        "index public.not_missing: account_id compared with the old key 999",
        "trigger first_flagged on table documents: account_id compared with the old key 1",
        "the default of public.documents.account_id (1): the old key 1",
    ] {
        assert!(m.summary.iter().any(|l| l.contains(line)), "'{line}' not in {:?}", m.summary);
    }
        let sql = sql_of(&m);
        assert!(sql.contains("CHECK (((id <> %1$L::uuid) OR (name = ''a1''::text)))', coalesce((SELECT m.new::text FROM uuidforge_keymap m WHERE m.old = '1'), '00000000-0000-0000-0000-000000000000'))"), "{sql}");
    }
);

case!(
    batched_accounts,
    "literals",
    "batched accounts",
    |plan, _c| {
        refused(plan, &["index public.one_title_elsewhere compares a changed column with an old key in its WHERE"]);
    }
);

case!(
    migrate_clients,
    "literals",
    "migrate clients",
    |plan, _c| {
        let sql = sql_of(&plan.unwrap());
        assert!(sql.contains("WHEN ((new.client_id = %1$L::uuid))"), "{sql}");
    }
);

case!(
    batched_clients,
    "literals",
    "batched clients",
    |plan, _c| {
        let sql = sql_of(&plan.unwrap());
        assert!(sql.contains("uuidforge_keymap_"), "{sql}");
        assert!(sql.contains("house_invoices"), "{sql}");
    }
);

case!(migrate_sites, "literals", "migrate sites", |plan, _c| {
    refused(
        plan,
        &[
            "the default of public.pages.site_id",
            "computed at run time",
            "DROP DEFAULT",
        ],
    );
});

case!(migrate_banks, "literals", "migrate banks", |plan, _c| {
    refused(
        plan,
        &[
            "policy this_bank on table loans",
            "computed at run time",
            "a setting read as uuid",
        ],
    );
});

case!(migrate_farms, "literals", "migrate farms", |plan, _c| {
    refused(plan, &["view public.this_farm", "computed at run time"]);
});

case!(migrate_vaults, "literals", "migrate vaults", |plan, _c| {
    refused(plan, &["constraint not_reserved", "computed at run time"]);
});

case!(migrate_ports, "literals", "migrate ports", |plan, _c| {
    refused(plan, &["view public.home_ports", "a list of old keys"]);
});

case!(batched_ports, "literals", "batched ports", |plan, _c| {
    refused(plan, &["view public.home_ports", "a list of old keys"]);
});

case!(migrate_zones, "literals", "migrate zones", |plan, _c| {
    refused(plan, &["view public.early_zones", "other than by = or <>"]);
});
