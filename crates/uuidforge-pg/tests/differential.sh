#!/usr/bin/env bash
# The extension's functions that carry a PostgreSQL 18 name, against
# PostgreSQL 18's own, on the same inputs:
#   uuid_extract_timestamp(uuid), uuid_extract_version(uuid) on 20 000
#   random and edge UUIDs (every version and variant, nil, max, the
#   extremes of v1/v6/v7 time);
#   uuidv7(interval) on 2 000 random and edge shifts: the same SQLSTATE when
#   either fails, and when both succeed a version 7 carrying the shifted
#   time (within 2 s of clock_timestamp() + shift);
#   uuidv4(): version 4, RFC variant, as 18's.
# On 18 the two live side by side (pg_catalog.f and the extension's
# public.f); the extension's answers on 15 are compared with 18's too.
# Needs both servers (scripts/pg-setup.sh and scripts/pg-setup.sh --pg 18).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../../scripts/pg-env.sh
. "$here/../../../scripts/pg-env.sh"
work="$(mktemp -d /tmp/uuidforge-differential.XXXXXX)"
chmod 755 "$work"
chown postgres "$work"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "differential.sh: FAILED: $*" >&2; exit 1; }
db=uuidforge_differential

python3 - "$work" <<'PY'
import random, sys
rng = random.Random(20261124)
out = sys.argv[1]
ids = set()
def u(v): return '%032x' % v
# Edge cases: nil, max, every version with every variant, time extremes.
ids.update([u(0), u((1 << 128) - 1)])
for version in range(16):
    for variant in range(4):
        for fill in (0, (1 << 128) - 1, rng.getrandbits(128)):
            v = fill & ~(0xF << 76) & ~(0x3 << 62)
            v |= version << 76 | variant << 62
            ids.add(u(v))
for version in (1, 6, 7):
    for bits in (0, 1, (1 << 60) - 1, (1 << 48) - 1, 1 << 47, rng.getrandbits(60)):
        v = rng.getrandbits(128) & ~(0xF << 76) & ~(0x3 << 62) | version << 76 | 2 << 62
        if version == 7:
            v = v & ((1 << 80) - 1) | (bits & ((1 << 48) - 1)) << 80
        elif version == 6:
            hi = bits >> 12 & ((1 << 48) - 1)
            lo = bits & 0xFFF
            v = v & ~(((1 << 48) - 1) << 80) & ~(0xFFF << 64) | hi << 80 | lo << 64
        else:
            low, mid, high = bits & 0xFFFFFFFF, bits >> 32 & 0xFFFF, bits >> 48 & 0xFFF
            v = v & ((1 << 64) - 1) & ~(0xFFF << 64) | low << 96 | mid << 80 | high << 64
            v |= 1 << 76
        ids.add(u(v))
while len(ids) < 20000:
    v = rng.getrandbits(128)
    if rng.random() < 0.5:  # an RFC variant with a common version half the time
        v = v & ~(0xF << 76) & ~(0x3 << 62) | rng.choice([1, 4, 6, 7, 8]) << 76 | 2 << 62
    ids.add(u(v))
with open(f"{out}/ids.txt", "w") as f:
    for i in sorted(ids):
        f.write(f"{i[:8]}-{i[8:12]}-{i[12:16]}-{i[16:20]}-{i[20:]}\n")
shifts = ['0', '1 millisecond', '-1 millisecond', '1 year', '-1 year', '-56 years', '-57 years',
          '8919 years', '8920 years', '-8919 years', '10000 years', '-10000 years', '290000 years',
          '-290000 years', '300000 years', '-300000 years', '178000000 months', '-178000000 months',
          '2147483647 days', '-2147483648 days', '2147483647 months', '-2147483648 months',
          '9223372036854775807 microseconds', '-9223372036854775807 microseconds', '1 day -86400 seconds',
          '-1 month 30 days']  # (no infinite intervals: 15 has none)
while len(shifts) < 2000:
    unit = rng.choice(['milliseconds', 'seconds', 'hours', 'days', 'months', 'years'])
    scale = {'milliseconds': 3e14, 'seconds': 3e11, 'hours': 9e7, 'days': 4e6, 'months': 1.3e5, 'years': 1.1e4}[unit]
    n = int(rng.uniform(-1.3, 1.3) * scale)
    shifts.append(f"{n} {unit}")
with open(f"{out}/shifts.txt", "w") as f:
    f.write("\n".join(shifts) + "\n")
PY

# The answers of `schema`'s functions on server `major`, one line per input.
answers() {
  local major=$1 schema=$2
  pg_env "$major"
  local psql=(runuser -u postgres -- "$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -qAt -h "$PG_SOCKET" -p "$PG_PORT")
  "${psql[@]}" -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
  "${psql[@]}" -d "$db" -c "CREATE EXTENSION uuidforge" >/dev/null
  "${psql[@]}" -d "$db" <<SQL
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
CREATE TABLE ids (id uuid);
\\copy ids FROM '$work/ids.txt'
CREATE TABLE shifts (shift text);
\\copy shifts FROM '$work/shifts.txt'
CREATE FUNCTION shifted(shift text) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE got uuid; ms bigint; expected numeric;
BEGIN
    got := $schema.uuidv7(shift::interval);
    ms := ('x' || left(replace(got::text, '-', ''), 12))::bit(48)::int8;
    expected := extract(epoch FROM clock_timestamp() + shift::interval) * 1000;
    -- The shifted time, within the moment between the two calls.
    RETURN 'ok ' || (abs(ms - expected) < 2000)::text || ' v' || $schema.uuid_extract_version(got);
EXCEPTION WHEN OTHERS THEN
    RETURN 'error ' || SQLSTATE;
END
\$\$;
\\o $work/$major-$schema.extract
SELECT id, coalesce($schema.uuid_extract_version(id)::text, 'null'),
       coalesce($schema.uuid_extract_timestamp(id)::text, 'null') FROM ids ORDER BY id;
\\o $work/$major-$schema.shift
SELECT shift, shifted(shift) FROM shifts ORDER BY shift;
\\o $work/$major-$schema.v4
SELECT count(*) FILTER (WHERE $schema.uuid_extract_version(u) = 4
                          AND substr(u::text, 20, 1) IN ('8', '9', 'a', 'b')) || ' of ' || count(*)
FROM (SELECT $schema.uuidv4() AS u FROM generate_series(1, 10000)) s;
SQL
  "${psql[@]}" -d postgres -c "DROP DATABASE $db"
}

answers 18 pg_catalog
answers 18 public
answers 15 public
ids=$(wc -l < "$work/ids.txt")
shifts=$(wc -l < "$work/shifts.txt")
[ "$ids" -ge 10000 ] && [ "$shifts" -ge 1000 ] || fail "too few inputs ($ids UUIDs, $shifts shifts)"
status=0
for what in extract shift v4; do
  for mine in 18-public 15-public; do
    if ! diff -u "$work/18-pg_catalog.$what" "$work/$mine.$what" > "$work/diff"; then
      echo "differential.sh: $what: the extension ($mine) differs from PostgreSQL 18's own in $(grep -c '^+[^+]' "$work/diff") answers:" >&2
      head -20 "$work/diff" >&2
      status=1
    fi
  done
done
[ "$status" = 0 ] || exit 1
errors=$(grep -c '|error ' "$work/18-pg_catalog.shift" || true)
echo "differential.sh: $ids UUIDs (uuid_extract_timestamp, uuid_extract_version), $shifts shifts of uuidv7 ($errors refused, by SQLSTATE) and 10000 uuidv4: the extension on 15 and on 18 answers exactly as PostgreSQL 18"
