//! The `key_times` catalog: the time each new key carries, and the
//! creation-time column the plan proposes.

use crate::case;

case!(migrate_orders, "key_times", "migrate orders", |plan, _c| {
    let m = plan.unwrap();
    let times = m.summary.iter().find(|l| l.contains("key times:")).unwrap();
    assert!(times.contains("made up: from 2000-01-01 on"), "{times}");
    assert!(times.contains("WARNING: public.orders.order_date (date) looks like each row's creation time: --order-by order_date"), "{times}");
});

case!(
    migrate_orders_by_their_date,
    "key_times",
    "migrate orders by their date",
    |plan, _c| {
        let m = plan.unwrap();
        let times = m.summary.iter().find(|l| l.contains("key times:")).unwrap();
        assert!(times.contains("each row's order_date"), "{times}");
    }
);

case!(migrate_notes, "key_times", "migrate notes", |plan, _c| {
    let m = plan.unwrap();
    let times = m.summary.iter().find(|l| l.contains("key times:")).unwrap();
    assert!(
        times.contains("made up") && !times.contains("WARNING"),
        "{times}"
    );
});
