//! A real `fork()`: the child's UUIDs never repeat the parent's, because the
//! random source reseeds in the child (RFC 9562 §6.9).
#![cfg(unix)]

use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use uuid::Uuid;
use uuidforge::generator::{global, v7};

const N: usize = 20_000;

#[test]
fn child_after_fork_never_repeats_the_parent() {
    // Warm the generator and the thread's random source before forking, so
    // the child inherits their state.
    let _ = v7();
    let epoch = uuidforge::generator::source::fork_epoch();
    let mut fds = [0i32; 2];
    // SAFETY: plain POSIX calls; the child only generates, writes to the
    // pipe and leaves with _exit.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let mut out = unsafe { std::fs::File::from_raw_fd(fds[1]) };
        let ok = uuidforge::generator::source::fork_epoch() == epoch + 1;
        let mut bytes = Vec::with_capacity(N * 16 + 1);
        bytes.push(ok as u8);
        for _ in 0..N {
            bytes.extend_from_slice(v7().as_bytes());
        }
        let _ = out.write_all(&bytes);
        unsafe { libc::_exit(0) };
    }
    unsafe { libc::close(fds[1]) };
    let parent: Vec<Uuid> = (0..N).map(|_| v7()).collect();
    let mut child_bytes = Vec::new();
    let mut pipe = unsafe { std::fs::File::from_raw_fd(fds[0]) };
    pipe.read_to_end(&mut child_bytes).unwrap();
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(child_bytes.len(), N * 16 + 1);
    assert_eq!(child_bytes[0], 1, "the child saw the fork");
    let child: Vec<Uuid> = child_bytes[1..]
        .chunks(16)
        .map(|c| Uuid::from_slice(c).unwrap())
        .collect();
    assert!(child.windows(2).all(|w| w[0] < w[1]));
    // Same starting state in both processes: without a reseed the first
    // values would be identical.
    let parent_set: std::collections::HashSet<Uuid> = parent.iter().copied().collect();
    assert!(
        child.iter().all(|c| !parent_set.contains(c)),
        "a child value repeats a parent value"
    );
    let tails = |ids: &[Uuid]| {
        ids.iter()
            .map(|u| u.as_u128() as u64)
            .collect::<std::collections::HashSet<_>>()
    };
    assert!(
        tails(&parent).is_disjoint(&tails(&child)),
        "random tails repeat across the fork"
    );
    assert!(global().telemetry().ahead_ms < 60_000);
}
