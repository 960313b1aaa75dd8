//! Settings that can come from a flag, the environment or the config file,
//! in that order of precedence: `--profile` > `UUIDFORGE_PROFILE` >
//! `profile` in `$XDG_CONFIG_HOME/uuidforge/config.json` (or
//! `~/.config/uuidforge/config.json`); likewise `--format` >
//! `UUIDFORGE_FORMAT` > `format`.

use serde::Deserialize;
use std::path::PathBuf;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    profile: Option<String>,
    format: Option<String>,
}

/// `$VAR/uuidforge` when `VAR` holds an absolute path (the XDG base
/// directory rule: relative values are ignored), else `~/FALLBACK/uuidforge`.
fn xdg_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    let base = std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(fallback)))?;
    Some(base.join("uuidforge"))
}

/// Where the config file is looked for.
pub fn config_path() -> Option<PathBuf> {
    Some(xdg_dir("XDG_CONFIG_HOME", ".config")?.join("config.json"))
}

/// The data directory, `$XDG_DATA_HOME/uuidforge` (or
/// `~/.local/share/uuidforge`), created with mode 0700 when missing so that
/// what is kept there (names given to UUIDs) is private to the user.
pub fn data_dir() -> Result<PathBuf, String> {
    let dir = xdg_dir("XDG_DATA_HOME", ".local/share").ok_or_else(|| {
        "no data directory: set XDG_DATA_HOME or HOME, or give --names-db".to_string()
    })?;
    if !dir.is_dir() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(&dir)
            .map_err(|e| format!("data directory {}: {e}", dir.display()))?;
    }
    Ok(dir)
}

fn config_file() -> Result<ConfigFile, String> {
    let Some(path) = config_path() else {
        return Ok(ConfigFile::default());
    };
    match std::fs::read_to_string(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ConfigFile::default()),
        Err(e) => Err(format!("config file {}: {e}", path.display())),
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            format!(
                "config file {}: {e}; expected {{\"profile\": NAME|FILE, \"format\": NAME}}",
                path.display()
            )
        }),
    }
}

/// A resolved setting and where it came from (for messages).
pub struct Resolved {
    pub value: String,
    pub source: String,
}

/// Resolves one setting: the flag, else the environment variable, else the
/// config file, else the default.
pub fn resolve(
    flag: Option<&str>,
    flag_name: &str,
    env: &str,
    default: &str,
) -> Result<Resolved, String> {
    if let Some(v) = flag {
        return Ok(Resolved {
            value: v.to_string(),
            source: format!("--{flag_name}"),
        });
    }
    if let Ok(v) = std::env::var(env) {
        if !v.is_empty() {
            return Ok(Resolved {
                value: v,
                source: env.to_string(),
            });
        }
    }
    let file = config_file()?;
    let from_file = match flag_name {
        "profile" => file.profile,
        _ => file.format,
    };
    if let Some(v) = from_file {
        let path = config_path()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        return Ok(Resolved {
            value: v,
            source: format!("{flag_name} in {path}"),
        });
    }
    Ok(Resolved {
        value: default.to_string(),
        source: "the default".into(),
    })
}
