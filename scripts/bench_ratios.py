"""The ratio table of scripts/bench.sh: criterion's medians (from
$HOME_DIR) of uuidforge and its peer in each group, their ratio, and the
target, headed by the CPU and the codecs' tier."""

import json
import os
import pathlib

root = pathlib.Path(os.environ["HOME_DIR"])
tier = os.environ["TIER"]


def ns(group, name, per):
    f = root / group / name / "new" / "estimates.json"
    return json.loads(f.read_text())["median"]["point_estimate"] / per if f.exists() else None


rows = [
    # group, ours, peer, values per iteration, target ratio
    ("format_canonical", "uuidforge", "uuid", 1024, 1 / 3),
    ("parse_canonical", "uuidforge", "uuid", 1024, 1 / 4),
    ("base32_encode", "uuidforge", "ulid", 1024, 1 / 3),
    ("base32_decode", "uuidforge", "ulid", 1024, 1 / 3),
    ("v7_one_thread", "uuidforge_global", "uuid_now_v7", 1, 1 / 3),
    ("v7_two_threads", "uuidforge_global", "uuid_now_v7", 1, 1.0),
    ("v7_one_thread", "uuidforge_owned", "system_time_now", 1, 1.5),
    ("v7_one_thread", "uuidforge_owned_system_clock", "system_time_now", 1, None),
    ("v7_one_thread", "uuidforge_owned", "uuid7_generator", 1, 1.0),
    ("v7_fill", "uuidforge_fill_1024", "uuid7_generator_1024", 1024, None),
    # The CSPRNG's cipher chosen by measurement: the default (AES-128-CTR
    # where AES is in hardware) against ChaCha8 in the same generator.
    ("v7_fill", "uuidforge_fill_1024", "uuidforge_fill_1024_chacha8", 1024, None),
]
print(f"\n{os.environ['CPU']}; tier {tier}")
print(f"{'group':<16}{'ours':>29}{'ns/op':>8}{'peer':>29}{'ns/op':>8}{'ratio':>8}  target")
for group, ours, peer, per, target in rows:
    a, b = ns(group, ours, per), ns(group, peer, per)
    if a is None or b is None:
        continue
    r = a / b
    verdict = "(for information)" if target is None else f"<= {target:.3f} {'ok' if r <= target else 'MISSED'}"
    print(f"{group:<16}{ours:>29}{a:>8.2f}{peer:>29}{b:>8.2f}{r:>8.3f}  {verdict}")
fill = ns("v7_fill", "uuidforge_fill_1024", 1024)
if fill is not None:
    print(f"{'v7_fill':<16}{'per value':>29}{fill:>8.2f}{'':>45}  <= 2.5 ns {'ok' if fill <= 2.5 else 'MISSED'}")
