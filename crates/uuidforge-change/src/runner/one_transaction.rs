//! A change in one transaction ([`crate::ops::Run::OneTransaction`]): the
//! plan made again inside it and compared, the steps, the checks, commit —
//! or nothing at all.

use super::{bind, Applied};
use uuidforge_db::client::{Change, DbError};
use crate::ops::{Check, Operation, Planned, Run, Step, Stop};
use std::collections::BTreeMap;
use tokio_postgres::Config;

/// Runs `expected` in one transaction, checked before it commits.
pub(super) async fn run<O: Operation>(
    config: &Config,
    op: &O,
    expected: &O::Plan,
    secret: &[u8],
    applied: &mut Applied,
) -> Result<(), DbError> {
    let Run::OneTransaction { lock, .. } = &expected.change().run else {
        return Err(DbError::unreadable(
            "plan",
            "not a change in one transaction",
        ));
    };
    let tx = Change::begin(config).await?;
    // The tables are locked before the plan is made again: nothing can
    // change between the comparison and the statements. A table renamed
    // or dropped meanwhile makes the lock fail or the plans differ.
    if let Some(lock) = lock {
        match super::locks::take(tx.client(), lock).await {
            Err(e) if e.sqlstate() == Some("42P01") => {
                return Err(DbError::schema_changed(op.name()))
            }
            other => other?,
        }
    }
    super::locks::wait_normally(tx.client()).await?;
    let plan = super::plan_again(&tx, op, expected).await?;
    let Run::OneTransaction { steps, checks, .. } = &plan.change().run else {
        return Err(DbError::unreadable(
            "plan",
            "not a change in one transaction",
        ));
    };
    let mut before = Vec::new();
    for check in checks {
        if let Check::Unchanged { what, statement } = check {
            before.push(bind::one_text(tx.client(), statement, &applied.outputs, what).await?);
        }
    }
    for step in steps {
        run_step(op.name(), &tx, step, secret, applied).await?;
    }
    let mut failed = Vec::new();
    let mut unchanged = before.into_iter();
    for check in checks {
        let (made, bad) = check_one(&tx, check, &mut unchanged, &applied.outputs).await?;
        applied.checks.extend(made);
        failed.extend(bad);
    }
    if !failed.is_empty() {
        return Err(DbError::verification_failed(
            format!("verify the {} (nothing was changed)", op.name()),
            failed,
        ));
    }
    tx.commit().await
}

async fn run_step(
    operation: &str,
    tx: &Change,
    step: &Step,
    secret: &[u8],
    applied: &mut Applied,
) -> Result<(), DbError> {
    let client = tx.client();
    match step {
        Step::Run {
            statement,
            output: Some(name),
            ..
        } => {
            let value = bind::one_text(client, statement, &applied.outputs, name).await?;
            applied.outputs.insert(name.clone(), value);
        }
        Step::Run {
            statement,
            output: None,
            rows,
            message,
        } => {
            let n = bind::execute(client, statement, &applied.outputs).await?;
            if rows.is_some_and(|want| want != n) {
                let why = message.clone().unwrap_or_default();
                return Err(DbError::conflict(
                    operation,
                    format!("{why} (nothing was changed)"),
                ));
            }
        }
        Step::Expect {
            statement,
            expect,
            stop,
            context,
            message,
        } => {
            let value = bind::one_text(client, statement, &applied.outputs, context).await?;
            if &value != expect {
                let message = message.replace("{value}", &value);
                return Err(match stop {
                    Stop::Refused => DbError::refused(context.clone(), message),
                    Stop::Conflict => DbError::conflict(context.clone(), message),
                });
            }
        }
        Step::Keys(keys) => {
            applied.keyed_rows += keys.fill(client, secret).await?;
        }
        Step::Implicit(implicit) => {
            let merge_id = applied.outputs.get("merge_id").cloned().unwrap_or_default();
            applied.implicit += implicit.rewrite(client, &merge_id).await?;
        }
    }
    Ok(())
}

/// Runs one check: the checks made and the failed ones.
async fn check_one(
    tx: &Change,
    check: &Check,
    unchanged: &mut impl Iterator<Item = String>,
    outputs: &BTreeMap<String, String>,
) -> Result<(Vec<String>, Vec<String>), DbError> {
    let client = tx.client();
    Ok(match check {
        Check::Zero { what, statement } => {
            let json = bind::one_text(client, statement, outputs, what).await?;
            let (failed, checks) = crate::ops::key::checks::verification(&json)?;
            (checks, failed)
        }
        Check::Unchanged { what, statement } => {
            let before = unchanged.next().unwrap_or_default();
            let after = bind::one_text(client, statement, outputs, what).await?;
            let changed = crate::ops::key::checks::count_changes(&before, &after);
            let failed = changed.iter().map(|c| format!("{what}: {c}")).collect();
            (vec![format!("{what} changed: {}", changed.len())], failed)
        }
        Check::Present { what, statements } => {
            let mut missing = Vec::new();
            for (row, statement) in statements {
                if bind::one_text(client, statement, outputs, what).await? == "0" {
                    missing.push(format!("{row}: not back"));
                }
            }
            (vec![format!("{what}: {}", statements.len())], missing)
        }
    })
}
