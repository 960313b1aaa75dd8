//! UUIDv8 for sharded systems (E11): `uuidv8_shard(node)` with the layout
//! in the setting `uuidforge.shard_layout` (the JSON `uuidforge
//! shard-layout --out` writes, e.g. `{"node_bits": 10, "counter_bits": 14}`).

use crate::errors::invalid_argument;
use crate::generate::to_pg;
use crate::state::{server_state, V8_SHARD_SLOT};
use pgrx::prelude::*;
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};
use std::cell::RefCell;
use std::ffi::CString;
use uuidforge::generator::{ShardGenerator, ShardLayout};

pub static SHARD_LAYOUT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

pub fn init() {
    GucRegistry::define_string_guc(
        c"uuidforge.shard_layout",
        c"UUIDv8 shard layout used by uuidv8_shard(node).",
        c"JSON such as {\"node_bits\": 10, \"counter_bits\": 14}, as uuidforge shard-layout --out writes it.",
        &SHARD_LAYOUT,
        GucContext::Userset,
        GucFlags::default(),
    );
}

/// The last layout text, its layout, and a generator per node used.
type Generators = Option<(String, ShardLayout, Vec<(u64, ShardGenerator)>)>;

thread_local! {
    static GENERATORS: RefCell<Generators> = const { RefCell::new(None) };
}

/// A UUIDv8 of the shard layout in `uuidforge.shard_layout` for `node`:
/// time, node id, a counter and random bits. Values of one node are
/// increasing within the session; nodes with distinct ids never collide.
#[pg_extern(volatile, strict, parallel_safe)]
fn uuidv8_shard(node: i32) -> pgrx::Uuid {
    let text = SHARD_LAYOUT
        .get()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    if text.trim().is_empty() {
        invalid_argument(
            "uuidv8_shard",
            "uuidforge.shard_layout",
            "''",
            r#"a layout such as SET uuidforge.shard_layout = '{"node_bits": 10, "counter_bits": 14}'"#,
        );
    }
    let result = GENERATORS.with(|g| {
        let mut g = g.borrow_mut();
        if !matches!(&*g, Some((t, _, _)) if *t == text) {
            let layout = ShardLayout::from_json(&text).unwrap_or_else(|e| {
                let field = match e.field {
                    "shard layout" => "uuidforge.shard_layout".to_string(),
                    f => format!("uuidforge.shard_layout.{f}"),
                };
                invalid_argument("uuidv8_shard", &field, e.value, e.expected)
            });
            *g = Some((text.clone(), layout, Vec::new()));
        }
        let (_, layout, generators) = g.as_mut().expect("set above");
        let Some(id) = u64::try_from(node)
            .ok()
            .filter(|&n| layout.node_bits() >= 64 || n >> layout.node_bits() == 0)
        else {
            invalid_argument(
                "uuidv8_shard",
                "node",
                node,
                format_args!(
                    "0 ..= {} (the layout has {} node bits)",
                    (1u128 << layout.node_bits()) - 1,
                    layout.node_bits()
                ),
            );
        };
        let slot = match generators.iter().position(|(n, _)| *n == id) {
            Some(i) => i,
            None => {
                let made = layout
                    .generator(id)
                    .unwrap_or_else(|e| invalid_argument("uuidv8_shard", "node", node, e.expected));
                generators.push((id, made));
                generators.len() - 1
            }
        };
        generators[slot].1.generate()
    });
    match result {
        Ok(u) => {
            server_state().count(V8_SHARD_SLOT);
            to_pg(u)
        }
        Err(e) => crate::errors::time_out_of_range("uuidv8_shard", "the clock", &e.to_string()),
    }
}
