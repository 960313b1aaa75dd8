//! The `literals` catalog: old keys written as literals in definitions,
//! made again with the new keys of their rows read from the key map; and
//! what no key map translates, refused by name.

use crate::case;
use crate::catalogs::refused;
use crate::catalogs::{sql_of, summary_of};
use uuidforge_db::error::Reason;

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
        assert!(summary_of(&m).iter().any(|l| l.contains(line)), "'{line}' not in {:?}", summary_of(&m));
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
        refused(plan, Reason::NotInBatches, &["index public.one_title_elsewhere compares a changed column with an old key in its WHERE"]);
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
        Reason::OldKeyNotTranslatable,
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
        Reason::OldKeyNotTranslatable,
        &[
            "policy this_bank on table loans",
            "computed at run time",
            "a setting read as uuid",
        ],
    );
});

case!(migrate_farms, "literals", "migrate farms", |plan, _c| {
    refused(
        plan,
        Reason::OldKeyNotTranslatable,
        &["view public.this_farm", "computed at run time"],
    );
});

case!(migrate_vaults, "literals", "migrate vaults", |plan, _c| {
    refused(
        plan,
        Reason::OldKeyNotTranslatable,
        &["constraint not_reserved", "computed at run time"],
    );
});

case!(migrate_ports, "literals", "migrate ports", |plan, _c| {
    // A list of old keys, each made the new key of its row.
    let m = plan.unwrap();
    assert!(
        summary_of(&m).iter().any(|l| l
            .contains("view public.home_ports: port_id compared with the old keys 1, 2 (a list)")),
        "{:?}",
        summary_of(&m)
    );
    let sql = sql_of(&m);
    assert!(
        sql.contains("= ANY (ARRAY[%1$L::uuid, %2$L::uuid]))"),
        "{sql}"
    );
});

case!(batched_ports, "literals", "batched ports", |plan, _c| {
    assert!(sql_of(&plan.unwrap()).contains("uuidforge_keymap_"));
});

case!(
    migrate_harbors,
    "literals",
    "migrate harbors",
    |plan, _c| {
        let m = plan.unwrap();
        let summary = summary_of(&m);
        for line in [
        "constraint named_but_the_first_two: id compared with the old keys 1, 2 (a list)",
        "index public.boats_in_main_harbors: harbor_id compared with the old keys 3, 4 (a list)",
        "view public.main_harbor_boats: harbor_id compared with the old keys 3, 4 (a list)",
        "trigger special_harbors on table harbors: id compared with the old keys 1, 2 (a list)",
        "policy not_the_first_two on table boats: harbor_id compared with the old keys 1, 2 (a list)",
    ] {
        assert!(summary.iter().any(|l| l.contains(line)), "'{line}' not in {summary:?}");
    }
        let sql = sql_of(&m);
        assert!(
            sql.contains("<> ALL (ARRAY[%1$L::uuid, %2$L::uuid])"),
            "{sql}"
        );
    }
);

case!(
    batched_harbors,
    "literals",
    "batched harbors",
    |plan, _c| {
        refused(
            plan,
            Reason::NotInBatches,
            &["index public.boats_in_main_harbors compares a changed column with an old key"],
        );
    }
);

case!(migrate_zones, "literals", "migrate zones", |plan, _c| {
    refused(
        plan,
        Reason::OldKeyNotTranslatable,
        &["view public.early_zones", "other than by = or <>"],
    );
});
