#!/usr/bin/env bash
# A major-version upgrade with the extension in use: pg_upgrade from a
# PostgreSQL 15 cluster to a PostgreSQL 18 one (both throwaway clusters of
# their own, with the current build installed in both servers by
# scripts/pg-setup.sh and scripts/pg-setup.sh --pg 18):
#   1. on 15, preloaded (server-wide uuidv7()) and with its clock two hours
#      ahead (libfaketime), tables using every type, domain, operator class,
#      default and function of the extension, with data
#      (upgrade/use-*.sql), and the last uuidv7() handed out;
#   2. pg_upgrade --check, then pg_upgrade, to an 18 cluster made by initdb
#      with the old cluster's encoding, locale and (absent) data checksums,
#      uuidforge preloaded. Where pg_upgrade cannot work between the two
#      builds, the script shows why (the first error of its schema restore
#      and the statement) and, for the one known reason (Debian's 15.20
#      stores an attribute option, pg_attver, that 18.6 does not have),
#      does the same through pg_dump and a restore in one transaction;
#   3. control: started without the old cluster's uuidforge_checkpoint
#      file (pg_upgrade copies relations, not the files beside them), 18's
#      first uuidv7() is below the last one 15 handed out: the clock alone
#      does not keep the order;
#   4. the upgrade procedure's one extra step, copying uuidforge_checkpoint
#      into the new data directory, then: every row identical
#      (upgrade/digest.sql), every b-tree index passes amcheck, everything
#      works (upgrade/check.sql) and the next uuidv7() is above the last
#      one issued on 15.
# With KEEP=1 the work directory stays.
#   pg-upgrade.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
# shellcheck source=../../../scripts/pg-env.sh
. "$root/scripts/pg-env.sh"
fail() { echo "pg-upgrade.sh: FAILED: $*" >&2; [ -f "${work:-/nonexistent}/log" ] && tail -20 "$work/log" >&2; exit 1; }
pg_env 15
bin15=$PG_BIN
pg_env 18
bin18=$PG_BIN
[ -n "$bin18" ] && [ -x "$bin18/pg_upgrade" ] || fail "PostgreSQL 18 is not installed: run scripts/pg-setup.sh --pg 18 first"
fake=$(ls /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 2>/dev/null || true)
[ -n "$fake" ] || fail "libfaketime missing (apt-get install faketime; scripts/pg-setup.sh does it)"
work="$(mktemp -d /tmp/uuidforge-pg-upgrade.XXXXXX)"
chmod 755 "$work"
chown postgres "$work"
old="$work/old15"
new="$work/new18"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
as_pg() { runuser -u postgres -- "$@"; }
cleanup() {
  as_pg "$bin15/pg_ctl" -D "$old" -m fast -w stop >/dev/null 2>&1 || true
  as_pg "$bin18/pg_ctl" -D "$new" -m fast -w stop >/dev/null 2>&1 || true
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
start() { # start BIN DATA [env...]
  local bin="$1" data="$2"
  shift 2
  as_pg env "$@" "$bin/pg_ctl" -D "$data" -l "$work/log" -w \
    -o "-p $port -k $work -c listen_addresses=''" start >/dev/null
}
stop() { as_pg "$1/pg_ctl" -D "$2" -m fast -w stop >/dev/null; }
psql_() { as_pg env PGOPTIONS="${PGOPTIONS:-}" "$bin18/psql" -X -v ON_ERROR_STOP=1 -qAt -h "$work" -p "$port" "$@"; }
sql() { psql_ -d "$1" -c "$2"; }

# The same encoding and locale on both sides; 18's initdb turns data
# checksums on by default, 15's does not, and pg_upgrade needs them alike.
init_opts=(-A trust -U postgres --encoding=UTF8 --locale=C)
as_pg "$bin15/initdb" -D "$old" "${init_opts[@]}" >/dev/null
echo "shared_preload_libraries = 'uuidforge'" >>"$old/postgresql.conf"
start "$bin15" "$old" LD_PRELOAD="$fake" FAKETIME="+2h" DONT_FAKE_MONOTONIC=1
sql postgres "CREATE DATABASE app"
sql app "CREATE EXTENSION uuidforge"
[ "$(sql app "SELECT uuidv7_is_server_wide()")" = t ] || fail "15: uuidv7() is not server-wide"
for use in $(ls "$here"/upgrade/use-*.sql | sort -V); do psql_ -d app -f "$use" >/dev/null; done
psql_ -d app -f "$here/upgrade/digest.sql" >"$work/before"
last=$(sql app "SELECT uuidv7()")
ahead=$(sql app "SELECT round(extract(epoch FROM uuid_extract_timestamp('$last') - now()) / 60)")
echo "1. PostgreSQL $(sql app "SHOW server_version") (clock 2 h ahead): $(wc -l <"$work/before") relations, $(sql app "SELECT count(*) FROM app.events") events; last uuidv7() $last"
stop "$bin15" "$old"

as_pg "$bin18/initdb" -D "$new" "${init_opts[@]}" --no-data-checksums >/dev/null
echo "shared_preload_libraries = 'uuidforge'" >>"$new/postgresql.conf"
upgrade=(-b "$bin15" -B "$bin18" -d "$old" -D "$new" -p "$port" -P "$port" -s "$work" -U postgres)
(cd "$work" && as_pg "$bin18/pg_upgrade" --check "${upgrade[@]}") >"$work/check.log" 2>&1 ||
  { cat "$work/check.log" >&2; fail "pg_upgrade --check"; }
if (cd "$work" && as_pg "$bin18/pg_upgrade" "${upgrade[@]}") >"$work/upgrade.log" 2>&1; then
  grep -q '^Upgrade Complete' "$work/upgrade.log" || { cat "$work/upgrade.log" >&2; fail "pg_upgrade did not say Upgrade Complete"; }
  echo "2. pg_upgrade --check, then pg_upgrade: Upgrade Complete"
else
  # Why: the first error of pg_upgrade's schema restore, and its statement.
  why=$(find "$new" -path '*pg_upgrade_output.d*' -name 'pg_upgrade_dump_*.log' -exec grep -h -m1 'ERROR:' {} + | head -1 || true)
  [ -n "$why" ] || { cat "$work/upgrade.log" >&2; fail "pg_upgrade failed without a restore error"; }
  statement=$(find "$new" -path '*pg_upgrade_output.d*' -name 'pg_upgrade_dump_*.log' -exec grep -h 'pg_attver' {} + | grep -v ERROR | head -1 || true)
  case "$why" in
    *'unrecognized parameter "pg_attver"'*)
      echo "2. pg_upgrade --check passes, pg_upgrade cannot work between these two builds: restoring the schema on 18 fails"
      echo "   with $why"
      echo "   on: $statement"
      echo "   (Debian's PostgreSQL 15.20 stores an attribute option pg_attver on every column it creates; PostgreSQL 18.6"
      echo "   has no such option, and pg_upgrade restores every column's options.) So: pg_dump, and a restore with psql."
      ;;
    *) fail "pg_upgrade: $why" ;;
  esac
  # The same through pg_dump (18's, as pg_upgrade uses) and a restore into a
  # new 18 cluster, leaving out only those options.
  rm -rf "$new"
  as_pg "$bin18/initdb" -D "$new" "${init_opts[@]}" --no-data-checksums >/dev/null
  echo "shared_preload_libraries = 'uuidforge'" >>"$new/postgresql.conf"
  start "$bin15" "$old"
  as_pg "$bin18/pg_dump" -h "$work" -p "$port" -U postgres --format=plain --file="$work/app.sql" app
  stop "$bin15" "$old"
  attver='^ALTER TABLE ONLY .+ ALTER COLUMN .+ SET \(pg_attver=[0-9]+\);$'
  left_out=$(grep -c -E "$attver" "$work/app.sql" || true)
  grep -v -E "$attver" "$work/app.sql" >"$work/app.18.sql"
  ! grep -q pg_attver "$work/app.18.sql" || fail "pg_attver left in the dump in another form"
  start "$bin18" "$new"
  sql postgres "CREATE DATABASE app"
  psql_ -d app --single-transaction -f "$work/app.18.sql" >/dev/null 2>"$work/restore.log" ||
    { cat "$work/restore.log" >&2; fail "restoring the dump on 18"; }
  stop "$bin18" "$new"
  echo "   pg_dump from 15, restore into 18 in one transaction ($left_out pg_attver statements left out): done"
fi

start "$bin18" "$new"
control=$(sql app "SELECT uuidv7()")
[ "$(sql app "SELECT '$control'::uuid < '$last'::uuid")" = t ] ||
  fail "control: without the checkpoint file 18's first uuidv7() $control should be below 15's last $last (the clock is $ahead min behind it)"
echo "3. control, without the old checkpoint file: 18's first uuidv7() $control < $last"
stop "$bin18" "$new"

[ -f "$old/uuidforge_checkpoint" ] || fail "the 15 cluster has no uuidforge_checkpoint"
cp -p "$old/uuidforge_checkpoint" "$new/uuidforge_checkpoint"
start "$bin18" "$new"
[ "$(sql app "SELECT extversion FROM pg_extension WHERE extname = 'uuidforge'")" != "" ] || fail "18: no extension"
[ "$(sql app "SELECT uuidv7_is_server_wide()")" = t ] || fail "18: uuidv7() is not server-wide"
psql_ -d app -f "$here/upgrade/digest.sql" >"$work/after"
diff -u "$work/before" "$work/after" >&2 || fail "rows differ after pg_upgrade"
checked=$(psql_ -d app -f "$here/upgrade/amcheck.sql") || fail "amcheck on 18"
# check.sql calls the functions by their names: on 18 the extension's
# schema goes first, so that it tests the extension and not 18's own.
PGOPTIONS="-c search_path=public,pg_catalog" psql_ -d app -f "$here/upgrade/check.sql" >/dev/null || fail "the extension's functions on the upgraded cluster"
next=$(sql app "SELECT public.uuidv7()")
[ "$(sql app "SELECT '$next'::uuid > '$last'::uuid")" = t ] || fail "18's next uuidv7() $next is not above 15's last $last"
echo "4. with uuidforge_checkpoint copied: PostgreSQL $(sql app "SHOW server_version"): rows identical ($(wc -l <"$work/after") relations), $checked, everything works; next uuidv7() $next > $last"
echo "pg-upgrade.sh: passed"
