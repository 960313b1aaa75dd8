//! # Host-wide UUIDv7 order (E2)
//!
//! A [`GeneratorCell`] in a small file mapped into memory (by default on the
//! `/dev/shm` tmpfs), so that every process of a host — pre-fork workers,
//! several `uuidforge gen` runs, a server's workers — hands out strictly
//! increasing values through it: each value is one 16-byte compare-and-swap
//! on the shared mapping, from the last value handed out by anyone to the
//! next. There is no lock, so a process killed at any point (even with
//! `kill -9` between two instructions) leaves the cell valid: either its
//! swap happened or it did not.
//!
//! The file (128 bytes):
//!
//! ```text
//! offset  0  magic     16 bytes  "uuidforge cell\0\0"
//! offset 16  version   u32 LE    1
//! offset 20  cell size u32 LE    size of GeneratorCell (64)
//! offset 24  reserved  40 bytes  zero
//! offset 64  cell      64 bytes  GeneratorCell: last value, clock, events
//! ```
//!
//! A file that is not exactly that (another program's file, a truncated or
//! overwritten one, another format version) is refused with an error that
//! says what was found; so is a file anyone may write (its order would be
//! anyone's to break). New files are created with mode 0600 unless told
//! otherwise.
//!
//! The library itself does no file I/O; this crate is the part that does.
//!
//! ```
//! use uuidforge::generator::{GeneratorConfig, SharedGenerator};
//! let path = std::env::temp_dir().join(format!("uuidforge-doc-{}.cell", std::process::id()));
//! let host = uuidforge_host::HostCell::open(&path, 0o600).unwrap();
//! let g = SharedGenerator::new(GeneratorConfig::default()).unwrap();
//! let a = g.generate_in(host.cell()).unwrap();
//! let again = uuidforge_host::HostCell::open(&path, 0o600).unwrap(); // another process, say
//! assert!(g.generate_in(again.cell()).unwrap() > a);
//! # std::fs::remove_file(&path).unwrap();
//! ```
#![deny(missing_docs)]

use memmap2::MmapMut;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use uuidforge::generator::GeneratorCell;

/// The file's first 16 bytes.
pub const MAGIC: [u8; 16] = *b"uuidforge cell\0\0";
/// The file format this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// Where the cell sits in the file.
const CELL_OFFSET: usize = 64;
/// The file's size.
pub const FILE_SIZE: usize = 128;

const _: () = assert!(CELL_OFFSET + std::mem::size_of::<GeneratorCell>() <= FILE_SIZE);
const _: () = assert!(CELL_OFFSET.is_multiple_of(std::mem::align_of::<GeneratorCell>()));

/// Why a host cell could not be opened.
#[derive(Debug)]
pub struct HostCellError {
    /// The file.
    pub path: PathBuf,
    /// What was wrong and what was expected.
    pub message: String,
}

impl std::fmt::Display for HostCellError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "host-wide cell {}: {}",
            self.path.display(),
            self.message
        )
    }
}

impl std::error::Error for HostCellError {}

/// A generator cell shared by the processes of this host through a file.
pub struct HostCell {
    map: MmapMut,
    path: PathBuf,
}

impl std::fmt::Debug for HostCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCell")
            .field("path", &self.path)
            .finish()
    }
}

/// The default file: `/dev/shm/uuidforge-UID.cell` (memory, gone at
/// reboot, which is fine: the clock has moved on by then), or the same name
/// in the temporary directory where there is no `/dev/shm`.
pub fn default_path() -> PathBuf {
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let name = format!("uuidforge-{uid}.cell");
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.join(name)
    } else {
        std::env::temp_dir().join(name)
    }
}

fn header() -> [u8; FILE_SIZE] {
    let mut h = [0u8; FILE_SIZE];
    h[..16].copy_from_slice(&MAGIC);
    h[16..20].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[20..24].copy_from_slice(&(std::mem::size_of::<GeneratorCell>() as u32).to_le_bytes());
    h
}

impl HostCell {
    /// Opens the cell at `path`, creating it (with `mode`, e.g. `0o600`)
    /// when it does not exist. Creation is atomic: the file appears
    /// complete or not at all, and of two processes creating it at once one
    /// wins and both use its file.
    pub fn open(path: &Path, mode: u32) -> Result<HostCell, HostCellError> {
        let fail = |message: String| HostCellError {
            path: path.to_path_buf(),
            message,
        };
        if !GeneratorCell::is_lock_free() {
            return Err(fail(
                "this CPU has no lock-free 16-byte compare-and-swap, so processes cannot share a generator cell".into(),
            ));
        }
        if mode & 0o002 != 0 {
            return Err(fail(format!(
                "mode {mode:o} lets anyone write the cell (and break its order); expected a mode without write access for others, such as 600 or 660"
            )));
        }
        let file = match OpenOptions::new().read(true).write(true).open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                create(path, mode).map_err(|e| fail(format!("cannot create it: {e}")))?;
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(path)
                    .map_err(|e| fail(format!("cannot open it: {e}")))?
            }
            Err(e) => return Err(fail(format!("cannot open it: {e}"))),
        };
        check(&file).map_err(fail)?;
        // SAFETY: a shared mapping of a file whose size was checked; the
        // cell inside is only used through atomics, and other processes
        // changing the bytes is the point.
        let map = unsafe { MmapMut::map_mut(&file) }
            .map_err(|e| fail(format!("cannot map it into memory: {e}")))?;
        if map.len() != FILE_SIZE || map[..CELL_OFFSET] != header()[..CELL_OFFSET] {
            return Err(fail(
                "it changed while being opened; expected a uuidforge cell".into(),
            ));
        }
        Ok(HostCell {
            map,
            path: path.to_path_buf(),
        })
    }

    /// The shared cell: pass it to `SharedGenerator::generate_in`.
    pub fn cell(&self) -> &GeneratorCell {
        let p = self.map[CELL_OFFSET..].as_ptr();
        // SAFETY: the mapping is page-aligned and CELL_OFFSET a multiple of
        // the cell's alignment; it is FILE_SIZE long (checked); all-zero
        // bytes are the cell's initial state and any bytes are a valid
        // state (its fields are plain integers); it lives as long as self.
        unsafe { &*(p as *const GeneratorCell) }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Writes a complete new file beside `path` and links it into place: the
/// cell is never seen half-written. Losing the race to another process is
/// fine (its file is used).
fn create(path: &Path, mode: u32) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        // The umask may have removed bits the caller asked for.
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        f.write_all(&header())?;
        f.sync_all()?;
        match std::fs::hard_link(&tmp, path) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

/// Refuses anything but a uuidforge cell file nobody else may write.
fn check(file: &File) -> Result<(), String> {
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file; expected a uuidforge cell".into());
    }
    if meta.mode() & 0o002 != 0 {
        return Err(format!(
            "mode {:o} lets anyone write it (and break its order); chmod o-w it",
            meta.mode() & 0o777
        ));
    }
    if meta.len() != FILE_SIZE as u64 {
        return Err(format!(
            "{} bytes, expected {FILE_SIZE}: not a uuidforge cell (a foreign or truncated file); remove it to start a new one",
            meta.len()
        ));
    }
    let mut head = [0u8; CELL_OFFSET];
    std::os::unix::fs::FileExt::read_exact_at(file, &mut head, 0)
        .map_err(|e| format!("cannot read it: {e}"))?;
    let expected = header();
    if head[..16] != MAGIC {
        return Err(format!(
            "it starts with {:?}, expected {:?}: not a uuidforge cell (a foreign file); remove it to start a new one",
            String::from_utf8_lossy(&head[..16]),
            String::from_utf8_lossy(&MAGIC)
        ));
    }
    let version = u32::from_le_bytes(head[16..20].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(format!(
            "format version {version}, expected {FORMAT_VERSION} (made by another uuidforge version)"
        ));
    }
    if head[20..CELL_OFFSET] != expected[20..CELL_OFFSET] {
        return Err(format!(
            "header bytes 20..{CELL_OFFSET} are {:02x?}, expected the cell size {} and zeros: a corrupt cell",
            &head[20..CELL_OFFSET],
            std::mem::size_of::<GeneratorCell>()
        ));
    }
    Ok(())
}
