//! The `key_times` catalog: the time each new key carries, and the
//! creation-time column the plan proposes.

use crate::case;
use crate::catalogs::summary_of;

case!(migrate_orders, "key_times", "migrate orders", |plan, _c| {
    let m = plan.unwrap();
    let summary = summary_of(&m);
    let times = summary.iter().find(|l| l.contains("key times:")).unwrap();
    assert!(times.contains("made up: from 2000-01-01 on"), "{times}");
    assert!(times.contains("WARNING: public.orders.order_date (date) looks like each row's creation time: give the keys those times (--order-by order_date)"), "{times}");
});

case!(
    migrate_orders_by_their_date,
    "key_times",
    "migrate orders by their date",
    |plan, _c| {
        let m = plan.unwrap();
        let summary = summary_of(&m);
        let times = summary.iter().find(|l| l.contains("key times:")).unwrap();
        assert!(times.contains("each row's order_date"), "{times}");
    }
);

case!(migrate_notes, "key_times", "migrate notes", |plan, _c| {
    let m = plan.unwrap();
    let summary = summary_of(&m);
    let times = summary.iter().find(|l| l.contains("key times:")).unwrap();
    assert!(
        times.contains("made up") && !times.contains("WARNING"),
        "{times}"
    );
});

case!(
    migrate_baskets,
    "key_times",
    "migrate baskets",
    |plan, _c| {
        // Known by its default, not its name; never the time of an update.
        let m = plan.unwrap();
        let summary = summary_of(&m);
        let times = summary.iter().find(|l| l.contains("key times:")).unwrap();
        assert!(times.contains("WARNING: public.baskets.placed_at (timestamp with time zone) looks like each row's creation time: give the keys those times (--order-by placed_at)"), "{times}");
    }
);
