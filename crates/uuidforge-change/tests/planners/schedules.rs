//! The schedules are placements of the model's work, nothing more: for
//! every migration of every captured catalog that plans, each piece of work
//! the kinds of objects made (`MigrateKey::placed`) lands in the plan of its
//! schedule exactly once — every statement of the model in the plan as
//! often as the model made it, every statement of the plan from the model
//! — and each new column's fill in one statement (one transaction) or in
//! both passes of the backfill over each of its pieces (batches). A
//! schedule that leaves out a phase, or spells a statement of its own,
//! fails here.

use crate::catalogs::{captured, catalogs, Case};
use std::collections::BTreeMap;
use uuidforge_change::ops::migrate_key::{Placed, Work};
use uuidforge_change::ops::{Answers, BatchStep, ChangePlan, Operation, Planned, Run, Step};

/// How many times each statement stands.
type Counts = BTreeMap<String, usize>;

fn count(into: &mut Counts, statements: impl IntoIterator<Item = String>) {
    for s in statements {
        *into.entry(s).or_default() += 1;
    }
}

/// The statements of the model's work but the fills, and the fills'
/// pieces (each table a backfill reaches).
fn of_model(placed: &[Placed], batches: bool) -> (Counts, Counts) {
    let mut statements = Counts::new();
    let mut pieces = Counts::new();
    for p in placed {
        match &p.work {
            Work::Fill(f) if batches => {
                for (piece, _) in &f.pieces {
                    // Both passes.
                    count(&mut pieces, [piece.clone(), piece.clone()]);
                }
            }
            _ => count(&mut statements, p.statements()),
        }
    }
    (statements, pieces)
}

/// The statements of a plan's steps but its backfills, and the tables its
/// backfills reach.
fn of_plan(change: &ChangePlan) -> (Counts, Counts) {
    let mut statements = Counts::new();
    let mut pieces = Counts::new();
    match &change.run {
        Run::OneTransaction { steps, .. } => {
            for step in steps {
                match step {
                    Step::Run { statement, .. } => count(&mut statements, [statement.sql.clone()]),
                    Step::Data(d) => count(&mut statements, d.printed()),
                    Step::Expect { .. } => panic!("a migration expects nothing"),
                }
            }
        }
        Run::Batches { steps, .. } => {
            for step in steps {
                match step {
                    BatchStep::Transaction { statements: s, .. } => {
                        count(&mut statements, s.iter().cloned())
                    }
                    BatchStep::Concurrently {
                        cleanup, statement, ..
                    } => count(&mut statements, [cleanup.clone(), statement.clone()]),
                    BatchStep::Data(d) => count(&mut statements, d.printed()),
                    BatchStep::Backfill(b) => count(&mut pieces, [b.table.clone()]),
                    BatchStep::Check { .. } => {}
                    // The online copy's (not a schedule of the model's work).
                    BatchStep::Replay { .. } => panic!("a schedule of the model replays nothing"),
                    BatchStep::Beside { .. } => {
                        panic!("a schedule of the model runs nothing beside")
                    }
                }
            }
        }
    }
    (statements, pieces)
}

/// What one multiset has more than the other, both ways.
fn differences(model: &Counts, plan: &Counts) -> Vec<String> {
    let mut out = Vec::new();
    for (s, n) in model {
        let m = plan.get(s).copied().unwrap_or(0);
        if m != *n {
            out.push(format!("the model made {n}, the plan has {m}: {s}"));
        }
    }
    for (s, m) in plan {
        if !model.contains_key(s) {
            out.push(format!("the plan has {m} the model never made: {s}"));
        }
    }
    out
}

#[test]
fn every_piece_of_work_lands_in_its_schedule_exactly_once() {
    let mut checked = 0;
    for catalog in catalogs() {
        for c in captured(catalog.name) {
            for (name, case) in &catalog.cases {
                let Case::Migrate(op) = case else { continue };
                let none = Answers::default();
                let answers = c.answers.get(*name).unwrap_or(&none);
                let Ok(plan) = op.plan(&c.snapshot, answers) else {
                    // Refused: by name, which its reviewed words show.
                    continue;
                };
                let placed = op.placed(&c.snapshot, answers).unwrap();
                let batches = op.batch_size.is_some();
                let (model, model_pieces) = of_model(&placed, batches);
                let (planned, planned_pieces) = of_plan(plan.change());
                let mut wrong = differences(&model, &planned);
                wrong.extend(differences(&model_pieces, &planned_pieces));
                assert!(
                    wrong.is_empty(),
                    "{}/{name} on {}:\n  {}",
                    catalog.name,
                    c.major,
                    wrong.join("\n  ")
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "only {checked} plans checked");
}
