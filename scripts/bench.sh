#!/usr/bin/env bash
# Runs the benchmarks (uuidforge against uuid, uuid7 and ulid, all in one
# run) and prints each ratio against its target.
# Usage: scripts/bench.sh [codecs|generator] [criterion filter]
set -euo pipefail
cd "$(dirname "$0")/.."
benches=("${1:-codecs}")
[ "${1:-all}" = all ] && benches=(codecs generator)
[ "$#" -gt 0 ] && shift
for b in "${benches[@]}"; do
  cargo bench -p uuidforge --bench "$b" -- "$@"
done
python3 - <<'PY'
import json, pathlib
root = pathlib.Path("target/criterion")
def ns(group, name, per):
    f = root / group / name / "new" / "estimates.json"
    return json.loads(f.read_text())["median"]["point_estimate"] / per if f.exists() else None
rows = [
    # group, ours, peer, values per iteration, target ratio
    ("format_canonical", "uuidforge", "uuid", 1024, 1/3),
    ("parse_canonical", "uuidforge", "uuid", 1024, 1/4),
    ("base32_encode", "uuidforge", "ulid", 1024, 1/3),
    ("base32_decode", "uuidforge", "ulid", 1024, 1/3),
    ("v7_one_thread", "uuidforge_global", "uuid_now_v7", 1, 1/3),
    ("v7_two_threads", "uuidforge_global", "uuid_now_v7", 1, 1.0),
    ("v7_one_thread", "uuidforge_owned", "system_time_now", 1, 1.5),
    ("v7_one_thread", "uuidforge_owned_system_clock", "system_time_now", 1, None),
    ("v7_one_thread", "uuidforge_owned", "uuid7_generator", 1, 1.0),
]
print(f"\n{'group':<16}{'ours':>28}{'ns/op':>8}{'peer':>17}{'ns/op':>8}{'ratio':>8}  target")
for group, ours, peer, per, target in rows:
    a, b = ns(group, ours, per), ns(group, peer, per)
    if a is None or b is None:
        continue
    r = a / b
    verdict = "(for information)" if target is None else f"<= {target:.3f} {'ok' if r <= target else 'MISSED'}"
    print(f"{group:<16}{ours:>28}{a:>8.2f}{peer:>17}{b:>8.2f}{r:>8.3f}  {verdict}")
fill = ns("v7_fill", "uuidforge_fill_1024", 1024)
if fill is not None:
    print(f"{'v7_fill':<16}{'uuidforge_fill':>18}{fill:>8.2f}{'':>17}{'':>8}{'':>8}  <= 8 ns {'ok' if fill <= 8 else 'MISSED'}")
PY
