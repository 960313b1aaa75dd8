#!/usr/bin/env bash
# Runs the codec benchmarks (uuidforge against the uuid and ulid crates, in
# one run) and prints each ratio. Usage: scripts/bench.sh [criterion filter]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p uuidforge --bench codecs -- "$@"
python3 - <<'PY'
import json, pathlib
root = pathlib.Path("target/criterion")
targets = {"format_canonical": ("uuid", 1/3), "parse_canonical": ("uuid", 1/4),
           "base32_encode": ("ulid", 1/3), "base32_decode": ("ulid", 1/3)}
print(f"\n{'group':<18}{'uuidforge ns/op':>16}{'peer ns/op':>12}{'ratio':>8}{'target':>9}")
for group, (peer, target) in targets.items():
    def ns(name):
        f = root / group / name / "new" / "estimates.json"
        if not f.exists():
            return None
        return json.loads(f.read_text())["median"]["point_estimate"] / 1024  # 1024 values per iteration
    ours, theirs = ns("uuidforge"), ns(peer)
    if ours is None or theirs is None:
        continue
    ratio = ours / theirs
    verdict = "ok" if ratio <= target else "MISSED"
    print(f"{group:<18}{ours:>16.2f}{theirs:>12.2f}{ratio:>8.3f}{'<= %.3f' % target:>9} {verdict} (peer: {peer})")
PY
