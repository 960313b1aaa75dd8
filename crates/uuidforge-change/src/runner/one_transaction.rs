//! A change in one transaction ([`crate::ops::Run::OneTransaction`]): the
//! tables locked, the plan made again inside it and compared, the steps,
//! the checks, commit — or nothing at all.

use super::io::{Database, Session};
use super::Applied;
use crate::action::{Data, DataIo, Outputs};
use crate::ops::{Check, Operation, Planned, Run, Step, Stop};
use uuidforge_db::error::DbError;

/// Runs `expected` in one transaction, checked before it commits.
pub(super) async fn run<O: Operation, D: Database>(
    db: &D,
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
    let tx = db.connect().await?;
    super::locks::begin(&tx).await?;
    // The tables are locked before the plan is made again: nothing can
    // change between the comparison and the statements. A table renamed
    // or dropped meanwhile makes the lock fail or the plans differ.
    if let Some(lock) = lock {
        match super::locks::take(&tx, lock).await {
            Err(e) if e.sqlstate() == Some("42P01") => {
                return Err(DbError::schema_changed(op.name()))
            }
            other => other?,
        }
    }
    super::locks::wait_normally(&tx).await?;
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
            before.push(text(&tx, &statement.bound(&applied.outputs)?, what).await?);
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
    tx.execute("COMMIT").await
}

/// The first column of `statement`'s first row as text ("" when none).
async fn text(
    tx: &impl Session,
    statement: &crate::action::Statement,
    context: &str,
) -> Result<String, DbError> {
    Ok(DataIo::text(tx, statement)
        .await
        .map_err(|e| e.within(context.to_string()))?
        .unwrap_or_default())
}

async fn run_step(
    operation: &str,
    tx: &impl Session,
    step: &Step,
    secret: &[u8],
    applied: &mut Applied,
) -> Result<(), DbError> {
    match step {
        Step::Run {
            statement,
            output: Some(name),
            ..
        } => {
            let value = text(tx, &statement.bound(&applied.outputs)?, name).await?;
            applied.outputs.insert(name.clone(), value);
        }
        Step::Run {
            statement,
            output: None,
            rows,
            message,
        } => {
            let n = DataIo::run(tx, &statement.bound(&applied.outputs)?).await?;
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
            let value = text(tx, &statement.bound(&applied.outputs)?, context).await?;
            if &value != expect {
                let message = message.replace("{value}", &value);
                return Err(match stop {
                    Stop::Refused => DbError::refused(context.clone(), message),
                    Stop::Conflict => DbError::conflict(context.clone(), message),
                });
            }
        }
        Step::Data(data) => {
            let (counted, n) = data.run(tx, secret, &applied.outputs).await?;
            applied.count(counted, n);
        }
    }
    Ok(())
}

/// Runs one check: the checks made and the failed ones.
async fn check_one(
    tx: &impl Session,
    check: &Check,
    unchanged: &mut impl Iterator<Item = String>,
    outputs: &Outputs,
) -> Result<(Vec<String>, Vec<String>), DbError> {
    Ok(match check {
        Check::Zero { what, statement } => {
            let json = text(tx, &statement.bound(outputs)?, what).await?;
            let (failed, checks) = super::counts::verification(&json)?;
            (checks, failed)
        }
        Check::Unchanged { what, statement } => {
            let before = unchanged.next().unwrap_or_default();
            let after = text(tx, &statement.bound(outputs)?, what).await?;
            let changed = super::counts::changes(&before, &after);
            let failed = changed.iter().map(|c| format!("{what}: {c}")).collect();
            (vec![format!("{what} changed: {}", changed.len())], failed)
        }
        Check::Present { what, statements } => {
            let mut missing = Vec::new();
            for (row, statement) in statements {
                if text(tx, &statement.bound(outputs)?, what).await? == "0" {
                    missing.push(format!("{row}: not back"));
                }
            }
            (vec![format!("{what}: {}", statements.len())], missing)
        }
    })
}

/// Whether `steps` make new keys (and so need the secret).
pub(super) fn needs_secret(steps: &[Step]) -> bool {
    steps
        .iter()
        .any(|s| matches!(s, Step::Data(d) if Data::needs_secret(d)))
}
