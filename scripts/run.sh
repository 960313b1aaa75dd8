#!/usr/bin/env bash
# Builds the release binary and runs `uuidforge` with the given arguments.
# Without arguments it generates five UUIDv7 and inspects them and the RFC
# 9562 appendix vectors.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p uuidforge-cli
if [ "$#" -eq 0 ]; then
  mapfile -t fresh < <(./target/release/uuidforge gen -n 5)
  printf '%s\n' "${fresh[@]}"
  set -- inspect "${fresh[@]}" \
    C232AB00-9414-11EC-B3C8-9F6BDECED846 1EC9414C-232A-6B00-B3C8-9F6BDECED846 \
    017F22E2-79B0-7CC3-98C4-DC0C0C07398F 2489E9AD-2EE2-8E00-8EC9-32D5F69181C0
fi
exec ./target/release/uuidforge "$@"
