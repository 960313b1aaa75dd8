//! Key files, read one way by every command: raw bytes (not hex, no
//! newline) of the size the command needs, a warning on standard error
//! when others may read the file, made (32 bytes from the operating
//! system's CSPRNG, mode 0600, never over an existing file) only by a
//! command that says it makes one — and then its report names the file.
//!
//! | command | option | size | made when missing |
//! |---|---|---|---|
//! | `hide`, `reveal` | `--key-file` | 32 bytes | no (`hide --new-key F` makes one) |
//! | `serve` | `--hide-key-file` | 32 bytes | no |
//! | `gen --key` | `--secret-file` | at least 16 bytes (SQL's `uuidv7_from` secret) | no |
//! | `db migrate-key` | `--key-file` | 32 bytes | yes, and the report names it |

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use uuidforge::generator::RandSource;

/// The bytes of a key made here.
pub const KEY_BYTES: usize = 32;

/// How many bytes a key file must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// Exactly this many.
    Exactly(usize),
    /// At least this many.
    AtLeast(usize),
}

impl Size {
    fn holds(self, n: usize) -> bool {
        match self {
            Size::Exactly(want) => n == want,
            Size::AtLeast(want) => n >= want,
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Exactly(n) => write!(f, "{n} (exactly {n} raw bytes, not hex, no newline)"),
            Size::AtLeast(n) => write!(f, "at least {n} ({KEY_BYTES} random bytes are best)"),
        }
    }
}

/// A key file read or made.
pub struct KeyFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Whether this run made it.
    pub created: bool,
}

impl KeyFile {
    /// What a report says of it: `key file: PATH (made now, mode 0600)`.
    pub fn report(&self) -> String {
        // Absolute: a file written to the working directory is found
        // again from the report alone.
        let path = std::path::absolute(&self.path).unwrap_or_else(|_| self.path.clone());
        format!(
            "key file: {} ({})",
            path.display(),
            if self.created {
                "made now, mode 0600: keep it, the same file gives the same keys"
            } else {
                "read"
            }
        )
    }
}

/// Why a key file could not be used: the option, the file, what was
/// wrong and what was expected.
#[derive(Debug)]
pub struct KeyFileError {
    /// The option naming the file.
    pub option: String,
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub problem: Problem,
}

/// What went wrong with a key file.
#[derive(Debug)]
pub enum Problem {
    /// It could not be read.
    Read(std::io::Error),
    /// It holds another number of bytes.
    Size {
        /// What it holds.
        found: usize,
        /// What the command needs.
        expected: Size,
    },
    /// It could not be made (it exists: a key is never overwritten).
    Create(std::io::Error),
}

impl KeyFileError {
    /// What was wrong, without the option and the file.
    pub fn problem(&self) -> String {
        match &self.problem {
            Problem::Read(e) => format!("cannot read the key file: {e}"),
            Problem::Size { found, expected } => {
                format!("the key file holds {found} bytes, expected {expected}")
            }
            Problem::Create(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                "cannot make the key file: it exists (an existing key is never overwritten)".into()
            }
            Problem::Create(e) => format!("cannot make the key file: {e}"),
        }
    }
}

impl fmt::Display for KeyFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid value '{}' for '{}': {}",
            self.path.display(),
            self.option,
            self.problem()
        )
    }
}

impl std::error::Error for KeyFileError {}

fn error(option: &str, path: &Path, problem: Problem) -> KeyFileError {
    KeyFileError {
        option: option.to_string(),
        path: path.to_path_buf(),
        problem,
    }
}

/// Warns on standard error when others than its owner may read `path`.
fn warn_if_readable(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            let mode = meta.permissions().mode();
            if mode & 0o077 != 0 {
                eprintln!(
                    "uuidforge: warning: key file {} is readable by others (mode {:o}); chmod 600 it",
                    path.display(),
                    mode & 0o777
                );
            }
        }
    }
}

/// Reads the key file `path` given with `option`: `size` bytes.
pub fn read(option: &str, path: &Path, size: Size) -> Result<KeyFile, KeyFileError> {
    let bytes = std::fs::read(path).map_err(|e| error(option, path, Problem::Read(e)))?;
    if !size.holds(bytes.len()) {
        return Err(error(
            option,
            path,
            Problem::Size {
                found: bytes.len(),
                expected: size,
            },
        ));
    }
    warn_if_readable(path);
    Ok(KeyFile {
        path: path.to_path_buf(),
        bytes,
        created: false,
    })
}

/// Makes a new key file at `path`: [`KEY_BYTES`] bytes from the CSPRNG,
/// mode 0600, never over an existing file.
pub fn create(option: &str, path: &Path) -> Result<KeyFile, KeyFileError> {
    let mut bytes = vec![0u8; KEY_BYTES];
    uuidforge::generator::OsCsprng::new().fill(&mut bytes);
    let failed = |e| error(option, path, Problem::Create(e));
    let mut f = uuidforge_store::private_file::create_new(path).map_err(failed)?;
    f.write_all(&bytes)
        .and_then(|()| f.sync_all())
        .map_err(failed)?;
    Ok(KeyFile {
        path: path.to_path_buf(),
        bytes,
        created: true,
    })
}

/// Reads the key file `path`, made first when it does not exist (for a
/// command that says it makes one): [`KEY_BYTES`] bytes.
pub fn read_or_create(option: &str, path: &Path) -> Result<KeyFile, KeyFileError> {
    match read(option, path, Size::Exactly(KEY_BYTES)) {
        Err(KeyFileError {
            problem: Problem::Read(e),
            ..
        }) if e.kind() == std::io::ErrorKind::NotFound => create(option, path),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("uf_keyfile_{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn one_rule_for_every_key_file() {
        let d = dir();
        let path = d.join("k");
        let _ = std::fs::remove_file(&path);
        let made = read_or_create("--key-file", &path).unwrap();
        assert!(made.created && made.bytes.len() == KEY_BYTES);
        assert!(made.report().contains("made now, mode 0600"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let again = read_or_create("--key-file", &path).unwrap();
        assert!(!again.created && again.bytes == made.bytes);
        let e = create("--new-key", &path).err().unwrap().to_string();
        assert!(e.contains("never overwritten"), "{e}");
        std::fs::write(&path, b"0123456789abcdef\n").unwrap();
        let e = read("--key-file", &path, Size::Exactly(32))
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            e,
            format!("invalid value '{}' for '--key-file': the key file holds 17 bytes, expected 32 (exactly 32 raw bytes, not hex, no newline)", path.display())
        );
        assert!(read("--secret-file", &path, Size::AtLeast(16)).is_ok());
        let e = read("--key-file", &d.join("missing"), Size::Exactly(32))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cannot read the key file"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
