//! The printed form of a change: its summary as comments, the exact SQL of
//! its steps in order, its checks, then its epilogue.

use super::change::{ChangePlan, Line, Run};
use super::step::{Backfill, BatchStep, Check, Part, Step};
use crate::action::one_line;
use uuidforge_db::error::Vocabulary;

/// The printed form of `change`, line by line, its summary's ways out in
/// the words of `vocabulary` (a front end's).
pub fn print(change: &ChangePlan, vocabulary: &dyn Vocabulary) -> Vec<String> {
    printed(change, true, vocabulary)
}

/// The printed form of `change` without what planning measured: what two
/// plans of the same change print alike (a fleet's members compare it).
pub fn print_compared(change: &ChangePlan, vocabulary: &dyn Vocabulary) -> Vec<String> {
    printed(change, false, vocabulary)
}

fn printed(change: &ChangePlan, measured: bool, vocabulary: &dyn Vocabulary) -> Vec<String> {
    let measured: &[Line] = if measured { &change.measured.0 } else { &[] };
    let mut out: Vec<String> = change
        .summary
        .iter()
        .chain(measured)
        .map(|line| format!("-- {}", one_line(&line.rendered(vocabulary))))
        .collect();
    match &change.run {
        Run::OneTransaction {
            lock,
            steps,
            checks,
        } => {
            out.push("BEGIN;".into());
            out.extend(lock.iter().map(|l| format!("{};", l.statement())));
            for step in steps {
                out.extend(print_step(step));
            }
            for check in checks {
                out.extend(print_check(check));
            }
            out.push("COMMIT;".into());
        }
        Run::Batches {
            steps,
            session,
            give_up,
            ..
        } => {
            if !session.is_empty() {
                out.push(String::new());
                out.push("-- the session of every step:".into());
                out.extend(session.iter().map(|s| format!("{};", s.statement())));
            }
            for (i, step) in steps.iter().enumerate() {
                let how = match step {
                    BatchStep::Transaction {
                        exclusive: true, ..
                    } => " (one transaction; writers wait)",
                    BatchStep::Backfill(_) => ", one transaction per range of pages",
                    BatchStep::Replay { .. } => ", one transaction per round",
                    BatchStep::Concurrently { .. } => " (no transaction; writers go on)",
                    BatchStep::Beside { sessions, .. } => &format!(
                        ", side by side on up to {sessions} sessions, the largest part first"
                    ),
                    _ => " (one transaction)",
                };
                out.push(String::new());
                out.push(format!("-- step {}: {}{how}", i + 1, one_line(step.what())));
                out.extend(print_batch_step(step));
            }
            if let Some(g) = give_up {
                out.push(String::new());
                out.push(format!(
                    "-- given up while under way, until step {} has committed (its state removed in the same transaction):",
                    g.before + 1
                ));
                out.push("BEGIN;".into());
                out.push(format!("{};", g.lock.statement()));
                out.extend(g.statements.iter().map(|s| format!("{s};")));
                out.push("COMMIT;".into());
            }
        }
    }
    out.extend(change.epilogue.iter().cloned());
    out
}

fn print_step(step: &Step) -> Vec<String> {
    match step {
        Step::Run { statement, .. } => vec![statement.printed()],
        Step::Expect {
            statement, expect, ..
        } => vec![format!(
            "-- expect '{}' from: {}",
            one_line(expect),
            statement.printed()
        )],
        Step::Data(data) => data.printed(),
    }
}

fn print_batch_step(step: &BatchStep) -> Vec<String> {
    match step {
        BatchStep::Data(data) => data.printed(),
        BatchStep::Transaction {
            lock,
            statements,
            mark,
            ..
        } => {
            let mut lines = vec!["BEGIN;".to_string()];
            lines.extend(lock.iter().map(|l| format!("{};", l.statement())));
            lines.extend(statements.iter().map(|s| format!("{s};")));
            if let Some(mark) = mark {
                lines.push(format!(
                    "-- its transaction id is kept as '{}'",
                    one_line(mark)
                ));
            }
            lines.push("COMMIT;".into());
            lines
        }
        BatchStep::Backfill(b) => print_backfill(b),
        BatchStep::Beside { parts, .. } => {
            let mut out = Vec::new();
            for (n, part) in parts.iter().enumerate() {
                out.push(format!("-- part {}: {}", n + 1, one_line(part.what())));
                match part {
                    Part::Transaction { statements, .. } => {
                        out.push("BEGIN;".to_string());
                        out.extend(statements.iter().map(|s| format!("{s};")));
                        out.push("COMMIT;".into());
                    }
                    Part::Backfill(b) => out.extend(print_backfill(b)),
                }
            }
            out
        }
        BatchStep::Concurrently {
            cleanup, statement, ..
        } => vec![format!("{cleanup};"), format!("{statement};")],
        BatchStep::Replay {
            statements,
            remaining,
            until,
            rounds,
            ..
        } => {
            let mut out = vec![format!(
                "-- each round, one transaction, until at most {until} remain or {rounds} rounds ran:"
            )];
            out.push("BEGIN;".into());
            out.extend(statements.iter().map(|s| format!("{s};")));
            out.push("COMMIT;".into());
            out.push(format!("{remaining};  -- how many remain"));
            out
        }
        BatchStep::Check { sql, binds, .. } => {
            let bound: Vec<String> = binds
                .iter()
                .enumerate()
                .map(|(i, b)| format!("${} = {}", i + 1, one_line(b)))
                .collect();
            if bound.is_empty() {
                vec![format!("{sql};  -- every count 0")]
            } else {
                vec![format!("{sql};  -- {}; every count 0", bound.join(", "))]
            }
        }
    }
}

fn print_backfill(b: &Backfill) -> Vec<String> {
    let mut out = vec!["-- each range of pages, one transaction:".to_string()];
    out.extend(b.quiet.iter().map(|s| format!("{s};")));
    let mismatch = b
        .mismatch
        .as_deref()
        .unwrap_or("how many of them changed in other columns");
    out.push(format!("{};  -- $1 its first page, $2 the page after its last: rows filled, and {mismatch} (0, else rollback)", b.update_sql));
    out.extend(b.restore.iter().map(|s| format!("{s};")));
    out
}

fn print_check(check: &Check) -> Vec<String> {
    match check {
        Check::Zero { statement, .. } => vec![
            "-- verify (every count 0, else rollback):".into(),
            statement.printed(),
        ],
        Check::Unchanged { what, statement } => vec![
            format!("-- verify: {what} the same before and after:"),
            statement.printed(),
        ],
        Check::Present { what, statements } => {
            let mut lines = vec![format!("-- verify: {what}:")];
            lines.extend(statements.iter().map(|(_, s)| s.printed()));
            lines
        }
    }
}
