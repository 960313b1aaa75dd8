//! Files only their owner may read or write (mode 0600), whatever the
//! umask: a backup holds a table's rows, a key file the secret of new keys,
//! a fleet's state the members' progress, a names store the user's names.
//! The mode is set exactly on the file descriptor that was created, so no
//! other process ever sees the file readable.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// The mode every file here gets: read and write by its owner.
pub const MODE: u32 = 0o600;

/// Creates `path`, which must not exist (an existing one is never
/// overwritten: `AlreadyExists`), mode 0600.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("uf_private_doc_{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("backup.dump");
/// uuidforge_store::private_file::create_new(&path).unwrap();
/// assert!(uuidforge_store::private_file::create_new(&path).is_err());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn create_new(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    private(&mut options);
    let file = options.open(path)?;
    exactly_private(&file)?;
    Ok(file)
}

/// Writes `bytes` to `path` whole: into a new file beside it (mode 0600),
/// synced, then renamed over it, so that a kill leaves the old content or
/// the new one, never half of either.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".new");
    let tmp = std::path::PathBuf::from(tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    private(&mut options);
    let mut file = options.open(&tmp)?;
    exactly_private(&file)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// What [`ensure`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ensured {
    /// The file was missing: made, empty, 0600.
    Created,
    /// It was there, its owner's only.
    AlreadyPrivate,
    /// It was there and others could read or write it (the old mode):
    /// narrowed to 0600.
    Narrowed(u32),
}

/// Makes `path` its owner's only: created (empty) when missing, narrowed to
/// 0600 when others may read or write it.
pub fn ensure(path: &Path) -> std::io::Result<Ensured> {
    match create_new(path) {
        Ok(_) => Ok(Ensured::Created),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => narrow(path),
        Err(e) => Err(e),
    }
}

#[cfg(unix)]
fn narrow(path: &Path) -> std::io::Result<Ensured> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
    if mode & 0o077 == 0 {
        return Ok(Ensured::AlreadyPrivate);
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(MODE))?;
    Ok(Ensured::Narrowed(mode))
}

#[cfg(not(unix))]
fn narrow(_: &Path) -> std::io::Result<Ensured> {
    Ok(Ensured::AlreadyPrivate)
}

#[cfg(unix)]
fn private(options: &mut std::fs::OpenOptions) {
    std::os::unix::fs::OpenOptionsExt::mode(options, MODE);
}

#[cfg(not(unix))]
fn private(_: &mut std::fs::OpenOptions) {}

/// The umask may have taken bits away, never added any: the mode set
/// exactly.
#[cfg(unix)]
fn exactly_private(file: &File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(MODE))
}

#[cfg(not(unix))]
fn exactly_private(_: &File) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn every_way_leaves_the_owner_alone_with_the_file() {
        let dir = std::env::temp_dir().join(format!("uf_private_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let made = dir.join("made");
        create_new(&made).unwrap();
        assert_eq!(mode(&made), 0o600);
        assert_eq!(
            create_new(&made).unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
        let state = dir.join("state.json");
        replace(&state, b"one").unwrap();
        replace(&state, b"two").unwrap();
        assert_eq!(std::fs::read(&state).unwrap(), b"two");
        assert_eq!(mode(&state), 0o600);
        assert!(!dir.join("state.json.new").exists());
        let open = dir.join("names");
        std::fs::write(&open, b"x").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(ensure(&open).unwrap(), Ensured::Narrowed(0o644));
        assert_eq!(ensure(&open).unwrap(), Ensured::AlreadyPrivate);
        assert_eq!(ensure(&dir.join("new")).unwrap(), Ensured::Created);
        assert_eq!(mode(&open), 0o600);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
