//! `uuidforge model`: DDL with UUIDv7 keys from a model file (D9). The
//! generation is `uuidforge-model`'s; this module reads the file, picks
//! the target and writes.

use crate::UsageError;
use std::path::{Path, PathBuf};
use uuidforge_model::model::HubKeys;

/// Arguments of `model`.
#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["file", "json_schema"]))]
pub struct Args {
    /// The model: Anchor Modeler XML (.xml) or the YAML format (.yaml,
    /// .yml, .json; see --json-schema).
    file: Option<PathBuf>,
    /// What to generate.
    #[arg(long, value_enum, requires = "file")]
    target: Option<Target>,
    /// Write FILE-STEM.TARGET.sql (and FILE-STEM.load_SOURCE.sql per Data
    /// Vault source) into this directory instead of printing.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Put every object in this PostgreSQL schema (instead of the model's).
    #[arg(long)]
    schema: Option<String>,
    /// The schema the uuidforge extension is installed in (default: the
    /// model's extension_schema, else public): the DDL calls its functions
    /// through it, whatever the search_path (PostgreSQL 18's own uuidv7()
    /// in pg_catalog would otherwise take the place of the server-wide one).
    #[arg(long, value_name = "SCHEMA")]
    extension_schema: Option<String>,
    /// Data Vault: hub and link keys `v7_from` (deterministic, the
    /// default) or `uuidv7` (fresh), instead of the model's choice.
    #[arg(long, value_enum)]
    hub_keys: Option<HubKeyArg>,
    /// Print the JSON Schema of the YAML model format.
    #[arg(long)]
    json_schema: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Target {
    /// Anchor Modeling (6NF): knots, anchors, attributes, ties, latest and
    /// point-in-time, insert and update through the latest views.
    Anchor,
    /// Changing and recording time per attribute and tie, as-of and as-was
    /// functions.
    Bitemporal,
    /// Hubs, links, satellites, effectivity satellites, staging tables and
    /// a loader per source.
    Datavault,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum HubKeyArg {
    V7From,
    Uuidv7,
}

/// Runs `model`.
pub fn run(args: Args) -> Result<(), UsageError> {
    if args.json_schema {
        print!("{}", uuidforge_model::json_schema());
        return Ok(());
    }
    let file = args.file.as_ref().expect("clap requires a file");
    let Some(target) = args.target else {
        return Err(UsageError::plain(
            "model: give --target anchor, bitemporal or datavault",
        ));
    };
    let name = file.display().to_string();
    let text =
        std::fs::read_to_string(file).map_err(|e| UsageError::plain(format!("{name}: {e}")))?;
    let is_xml = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
        || text.trim_start().starts_with('<');
    let mut model = if is_xml {
        uuidforge_model::from_anchor_xml(&text)
    } else {
        uuidforge_model::from_yaml(&text)
    }
    .map_err(|e| UsageError::plain(format!("{name}: {e}")))?;
    if let Some(schema) = &args.extension_schema {
        model.extension_schema = schema.clone();
    }
    if let Some(schema) = &args.schema {
        model.schema = schema.clone();
    }
    if let Some(keys) = args.hub_keys {
        model.datavault.hub_keys = match keys {
            HubKeyArg::V7From => HubKeys::V7From,
            HubKeyArg::Uuidv7 => HubKeys::Uuidv7,
        };
    }
    model
        .validate()
        .map_err(|e| UsageError::plain(format!("{name}: {e}")))?;
    let source_name = file
        .file_name()
        .map_or(name.clone(), |n| n.to_string_lossy().into_owned());
    let fail = |e: uuidforge_model::ModelError| UsageError::plain(format!("{name}: {e}"));
    let (target_name, ddl, loaders) = match target {
        Target::Anchor => (
            "anchor",
            uuidforge_model::anchor::generate(&model, &source_name).map_err(fail)?,
            Vec::new(),
        ),
        Target::Bitemporal => (
            "bitemporal",
            uuidforge_model::bitemporal::generate(&model, &source_name).map_err(fail)?,
            Vec::new(),
        ),
        Target::Datavault => {
            let (ddl, loaders) =
                uuidforge_model::datavault::generate(&model, &source_name).map_err(fail)?;
            ("datavault", ddl, loaders)
        }
    };
    let Some(dir) = &args.out else {
        println!("{ddl}");
        for (_, loader) in &loaders {
            println!("\n{loader}");
        }
        return Ok(());
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| UsageError::plain(format!("--out {}: {e}", dir.display())))?;
    let stem = file
        .file_stem()
        .map_or("model".into(), |s| s.to_string_lossy().into_owned());
    write(dir, &format!("{stem}.{target_name}.sql"), &ddl)?;
    for (source, loader) in &loaders {
        write(dir, &format!("{stem}.load_{source}.sql"), loader)?;
    }
    Ok(())
}

fn write(dir: &Path, file: &str, text: &str) -> Result<(), UsageError> {
    let path = dir.join(file);
    std::fs::write(&path, format!("{text}\n"))
        .map_err(|e| UsageError::plain(format!("--out: {}: {e}", path.display())))?;
    eprintln!("uuidforge: wrote {}", path.display());
    Ok(())
}
