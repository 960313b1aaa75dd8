#!/usr/bin/env bash
# The server-wide cell's checkpoint (E5, RFC 9562 §6.3) across restarts with
# the clock set back, on a throwaway cluster of its own (the main one keeps
# serving the other tests) with uuidforge in shared_preload_libraries:
#   1. real clock: 1000 values; the file exists, mode 0600, ahead of them;
#   2. restart under libfaketime two hours back: the next value is larger
#      than every value before, and uuidforge_telemetry() shows it running
#      ahead of the clock;
#   3. control: without the file, the same restart gives a smaller value
#      (so step 2 proves the checkpoint, not luck);
#   4. a corrupt file: a warning, values from the clock, the file rewritten.
# Needs the extension installed (scripts/pg-setup.sh) and faketime (Debian).
#   checkpoint.sh [15|18]   the server version whose binaries run it
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../../scripts/pg-env.sh
. "$here/../../../scripts/pg-env.sh"
pg_env "${1:-15}"
bin=$PG_BIN
fake=$(ls /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 2>/dev/null || true)
[ -n "$fake" ] || { echo "checkpoint.sh: libfaketime missing (apt-get install faketime; scripts/pg-setup.sh does it)" >&2; exit 1; }
work="$(mktemp -d /tmp/uuidforge-checkpoint.XXXXXX)"
chown postgres "$work"
data="$work/data"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
as_pg() { runuser -u postgres -- "$@"; }
stop() { as_pg "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true; }
trap 'stop; rm -rf "$work"' EXIT
fail() { echo "checkpoint.sh: FAILED: $*" >&2; cat "$work/log" >&2 || true; exit 1; }

start() { # start [FAKETIME offset]
  local env=()
  if [ -n "${1:-}" ]; then env=(LD_PRELOAD="$fake" FAKETIME="$1" DONT_FAKE_MONOTONIC=1); fi
  as_pg env "${env[@]}" "$bin/pg_ctl" -D "$data" -l "$work/log" -w \
    -o "-p $port -k $work -c listen_addresses=''" start >/dev/null
}
sql() { as_pg "$bin/psql" -X -v ON_ERROR_STOP=1 -qAt -h "$work" -p "$port" -d postgres -c "$1"; }

as_pg "$bin/initdb" -D "$data" -A trust -U postgres >/dev/null
echo "shared_preload_libraries = 'uuidforge'" >> "$data/postgresql.conf"

start
sql "CREATE EXTENSION uuidforge"
[ "$(sql "SELECT uuidv7_is_server_wide()")" = t ] || fail "not server-wide"
before=$(sql "SELECT u::text FROM (SELECT public.uuidv7() AS u FROM generate_series(1, 1000)) s ORDER BY u DESC LIMIT 1")
file="$data/uuidforge_checkpoint"
[ -f "$file" ] || fail "no checkpoint file after 1000 values"
mode=$(stat -c %a "$file")
[ "$mode" = 600 ] || fail "checkpoint file mode $mode, expected 600"
stored=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["unix_ms"])' "$file")
before_ms=$(sql "SELECT (extract(epoch FROM uuid_extract_timestamp('$before'::uuid)) * 1000)::bigint")
[ "$stored" -gt "$before_ms" ] || fail "stored $stored is not ahead of the last value's $before_ms ms"
echo "1. real clock: last value $before, checkpoint $stored ms (ahead by $((stored - before_ms)) ms), mode 600"
stop

start "-2h"
skew=$(sql "SELECT round(extract(epoch FROM (clock_timestamp() - '$(date -u +%FT%T)Z'::timestamptz)) / 60)")
[ "$skew" -le -110 ] || fail "the faked clock is not 2 hours back (skew $skew min)"
after=$(sql "SELECT public.uuidv7()::text")
[ "$(sql "SELECT '$after'::uuid > '$before'::uuid")" = t ] || fail "after the restart 2 h back: $after is not above $before"
ahead=$(sql "SELECT value FROM uuidforge_telemetry() WHERE metric = 'ahead_ms'")
[ "$ahead" -gt 3600000 ] || fail "ahead_ms $ahead, expected about 2 h"
echo "2. restarted with the clock $skew min off: $after > $before; running ahead by $ahead ms"
stop

rm -f "$file"
start "-2h"
control=$(sql "SELECT public.uuidv7()::text")
[ "$(sql "SELECT '$control'::uuid < '$before'::uuid")" = t ] || fail "control: without the file $control should be below $before"
echo "3. control without the file: $control < $before (the checkpoint is what kept the order)"
stop

echo '{"unix_ms": "garbage"' > "$file"
chown postgres "$file"
start
value=$(sql "SELECT public.uuidv7()::text")
grep -q "uuidforge_checkpoint is corrupt" "$work/log" || fail "no warning about the corrupt file in the server log"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))["unix_ms"]' "$file" || fail "the corrupt file was not rewritten"
echo "4. corrupt file: warned, value $value from the clock, file rewritten"
echo "checkpoint.sh: passed"
