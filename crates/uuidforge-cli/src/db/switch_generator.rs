//! `uuidforge db switch-generator`: every column default that calls a UUID
//! generator other than the server's best (`gen_random_uuid()`,
//! `uuid_generate_v4()`, pg_uuidv7's, pg_idkit's, PostgreSQL 18's own
//! `uuidv7()`) set to it in one transaction, the keys already there kept.

use super::{change, ChangeArgs};
use crate::UsageError;
use std::process::ExitCode;
use uuidforge_change::ops::switch_generator::{SwitchGenerator, SwitchGeneratorPlan};
use uuidforge_change::runner::Applied;
use uuidforge_db::client::ReadOnly;

#[derive(clap::Args)]
pub(super) struct SwitchGeneratorArgs {
    #[command(flatten)]
    change: ChangeArgs,
}

pub(super) async fn run(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: SwitchGeneratorArgs,
) -> Result<ExitCode, UsageError> {
    let lines = change::Lines {
        secret: &change::no_secret,
        applied: &|p: &SwitchGeneratorPlan, _: &Applied| {
            vec![format!(
                "{} default(s) now call {} ({} left as they were)",
                p.switched.len(),
                p.generator,
                p.left.len()
            )]
        },
    };
    change::run(session, config, &SwitchGenerator, &args.change, lines).await
}
