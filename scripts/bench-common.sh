# Sourced by the scripts/bench*.sh: their short mode and the command line
# they measure.
#   bench_short "$@"   sets SHORT=1 when the first argument is --short and
#                      removes it from BENCH_ARGS (the rest of the arguments)
#   bench_bin          prints the uuidforge binary to measure: a release
#                      build; in the short mode (which the test command
#                      runs so that every benchmark keeps working, its
#                      figures meaning nothing) the one the tests built
#                      ($UUIDFORGE_BIN), else a debug build
#   TEST_BUILD         cargo's selection as the test command builds the
#                      tests (`cargo test --no-run` with the workspace's
#                      features): built that way, nothing compiles again
#   test_example NAME  prints the example NAME as the tests built it (in
#                      the short mode; a package alone, or `cargo build`,
#                      would build it and its dependencies again)
TEST_BUILD=(--workspace --exclude uuidforge-pg --exclude uuidforge-py --all-features)
test_example() {
  cargo test --no-run --quiet "${TEST_BUILD[@]}" 2>&1 | grep -v '^ *Executable' >&2 || true
  [ -x "target/debug/examples/$1" ] || { echo "bench: the example $1 was not built" >&2; return 1; }
  echo "$PWD/target/debug/examples/$1"
}
bench_short() {
  SHORT=0
  BENCH_ARGS=("$@")
  if [ "${1:-}" = --short ]; then
    SHORT=1
    BENCH_ARGS=("${@:2}")
  fi
}
bench_bin() {
  if [ "$SHORT" = 1 ]; then
    if [ -n "${UUIDFORGE_BIN:-}" ]; then
      echo "$UUIDFORGE_BIN"
      return
    fi
    cargo build -q -p uuidforge-cli
    echo "$PWD/target/debug/uuidforge"
  else
    cargo build -q --release -p uuidforge-cli
    echo "$PWD/target/release/uuidforge"
  fi
}
