#!/usr/bin/env bash
# Slow and many clients against `uuidforge serve` (scripts/bench_hostile.py):
# connections held, resident memory before/peak/after, and the latency of
# /healthz, /metrics and a short request under each attack; figures go to
# docs/PERFORMANCE.md.
# Usage: scripts/bench-hostile.sh [--short] [--before REV]
# --before REV: the same attacks, in the same run, on a release build of
# commit REV (built in target/bench-before, a git worktree).
# --short: tiny counts, the binary the tests built (the test command runs
# it so that it keeps working; its figures mean nothing); a probe that gets
# no answer still fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
set -- "${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"}"
peer=()
if [ "${1:-}" = --before ]; then
  rev="${2:?--before needs a commit}"
  tree=target/bench-before/tree
  git worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
  git worktree add --detach "$tree" "$rev" >/dev/null
  echo "building $rev in $tree"
  (cd "$tree" && CARGO_TARGET_DIR="$PWD/../target" cargo build -q --release -p uuidforge-cli)
  peer=(--peer "$PWD/target/bench-before/target/release/uuidforge")
fi
bin=$(bench_bin)
short=()
[ "$SHORT" = 0 ] || short=(--short)
python3 scripts/bench_hostile.py "$bin" "${peer[@]+"${peer[@]}"}" "${short[@]+"${short[@]}"}"
