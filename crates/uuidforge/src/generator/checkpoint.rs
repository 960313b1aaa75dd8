//! Persistent generator state (RFC 9562 §6.3, E5): a file holding a
//! timestamp written *ahead* of the last one used, so that after a restart —
//! even one after the clock went back — the generator starts above every
//! UUID it made before.
//!
//! File I/O, so behind the `checkpoint-file` feature.

use std::io::Write;
use std::path::{Path, PathBuf};

/// A checkpoint file and its write-ahead margin.
#[derive(Debug)]
pub struct Checkpoint {
    path: PathBuf,
    margin_ms: u64,
    written: u64,
}

/// What opening a checkpoint found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointStart {
    /// Resume above this Unix millisecond (pass it to
    /// [`super::V7Generator::resume_after`]).
    Resume(u64),
    /// No usable file: start from the clock. The message says why (missing,
    /// unreadable, corrupt) for the caller to log as a warning.
    Fresh(String),
}

impl Checkpoint {
    /// Opens (without creating) the checkpoint at `path`. A missing or
    /// corrupt file is not an error: the generator starts from the clock and
    /// the reason is returned as a warning.
    ///
    /// ```
    /// use uuidforge::generator::{Checkpoint, CheckpointStart, GeneratorConfig, V7Generator};
    /// let path = std::env::temp_dir().join(format!("uuidforge-doc-{}.json", std::process::id()));
    /// let (mut cp, start) = Checkpoint::open(&path, 10_000);
    /// assert!(matches!(start, CheckpointStart::Fresh(_)));
    /// let mut g = V7Generator::new(GeneratorConfig::default()).unwrap();
    /// let last = g.generate().unwrap();
    /// cp.note(g.last_unix_ms()).unwrap();
    /// let (_, start) = Checkpoint::open(&path, 10_000);
    /// let CheckpointStart::Resume(ms) = start else { panic!() };
    /// let mut g2 = V7Generator::new(GeneratorConfig::default()).unwrap();
    /// g2.resume_after(ms);
    /// assert!(g2.generate().unwrap() > last);
    /// # std::fs::remove_file(&path).ok();
    /// ```
    pub fn open(path: impl AsRef<Path>, margin_ms: u64) -> (Checkpoint, CheckpointStart) {
        let path = path.as_ref().to_path_buf();
        let start = load(&path);
        let written = match start {
            CheckpointStart::Resume(ms) => ms,
            CheckpointStart::Fresh(_) => 0,
        };
        (
            Checkpoint {
                path,
                margin_ms: margin_ms.max(1),
                written,
            },
            start,
        )
    }

    /// Records that UUIDs up to `last_unix_ms` were made: when that comes
    /// within half a margin of the stored value, stores `last + margin`
    /// (written to a temporary file, synced, then renamed over the old one,
    /// so a crash leaves either the old or the new value).
    pub fn note(&mut self, last_unix_ms: u64) -> std::io::Result<()> {
        if last_unix_ms + self.margin_ms / 2 < self.written {
            return Ok(());
        }
        let ahead = last_unix_ms + self.margin_ms;
        store(&self.path, ahead)?;
        self.written = ahead;
        Ok(())
    }

    /// The value currently stored.
    pub fn stored_unix_ms(&self) -> u64 {
        self.written
    }
}

/// Reads a checkpoint file: [`CheckpointStart::Resume`] with its value, or
/// [`CheckpointStart::Fresh`] saying why not (missing, unreadable, corrupt).
/// For callers that share the file between processes and keep the
/// write-ahead bookkeeping themselves (the PostgreSQL extension).
pub fn load(path: &Path) -> CheckpointStart {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            CheckpointStart::Fresh(format!("checkpoint {} does not exist yet", path.display()))
        }
        Err(e) => CheckpointStart::Fresh(format!("checkpoint {} unreadable: {e}", path.display())),
        Ok(text) => match parse(&text) {
            Some(ms) => CheckpointStart::Resume(ms),
            None => CheckpointStart::Fresh(format!(
                "checkpoint {} is corrupt (expected {{\"unix_ms\": <integer>}}), starting from the clock",
                path.display()
            )),
        },
    }
}

/// Stores `unix_ms` in the checkpoint file crash-safely: written to a
/// temporary file (mode 0600), synced, renamed over the old one, and the
/// directory synced, so a crash leaves either the old or the new value.
pub fn store(path: &Path, unix_ms: u64) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut f = options.open(&tmp)?;
        writeln!(f, "{{\"unix_ms\": {unix_ms}}}")?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    #[cfg(unix)]
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

fn parse(text: &str) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    v.get("unix_ms")?
        .as_u64()
        .filter(|&ms| ms <= crate::v7::MAX_UNIX_MS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::{GeneratorConfig, V7Generator};

    #[test]
    fn a_restart_after_the_clock_went_back_still_emits_larger_values() {
        let dir = std::env::temp_dir().join(format!("uuidforge-cp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.json");
        let t = 1_700_000_000_000u64;
        let clock_at = |ms: u64| move || Some(ms * 1_000_000);
        let (mut cp, start) = Checkpoint::open(&path, 5_000);
        assert!(matches!(start, CheckpointStart::Fresh(ref m) if m.contains("does not exist")));
        let mut g = V7Generator::with_sources(
            GeneratorConfig::default(),
            clock_at(t),
            crate::generator::OsCsprng::new(),
        )
        .unwrap();
        let before = g.generate().unwrap();
        cp.note(g.last_unix_ms()).unwrap();
        assert_eq!(cp.stored_unix_ms(), t + 5_000);
        // Restart with the clock an hour behind.
        let (_, start) = Checkpoint::open(&path, 5_000);
        assert_eq!(start, CheckpointStart::Resume(t + 5_000));
        let mut g = V7Generator::with_sources(
            GeneratorConfig::default(),
            clock_at(t - 3_600_000),
            crate::generator::OsCsprng::new(),
        )
        .unwrap();
        g.resume_after(t + 5_000);
        assert!(g.generate().unwrap() > before);

        std::fs::write(&path, "{not json").unwrap();
        let (_, start) = Checkpoint::open(&path, 5_000);
        assert!(matches!(start, CheckpointStart::Fresh(ref m) if m.contains("corrupt")));
        std::fs::write(&path, "{\"unix_ms\": 999999999999999999}").unwrap();
        assert!(matches!(
            Checkpoint::open(&path, 5_000).1,
            CheckpointStart::Fresh(_)
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
