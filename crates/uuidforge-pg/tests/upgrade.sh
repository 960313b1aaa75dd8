#!/usr/bin/env bash
# ALTER EXTENSION uuidforge UPDATE from every earlier release, on the real
# PostgreSQL 15 server, as a user meets it:
#   1. the release's own build (its commit, listed in
#      upgrade/released/RELEASES, built once with cargo pgrx
#      package and kept under $UUIDFORGE_RELEASE_CACHE) is installed, a
#      throwaway cluster starts with it preloaded, and a database gets
#      tables using every type, domain, operator class, default and
#      function that release offers, with data (upgrade/use-X.Y.Z.sql);
#   2. the current build (the one scripts/pg-setup.sh installed) replaces
#      the library and the server restarts: every row reads the same and
#      every b-tree index passes amcheck before anyone runs the update;
#   3. ALTER EXTENSION uuidforge UPDATE: every row identical
#      (upgrade/digest.sql: rows and an MD5 of each table and view), every
#      index passes amcheck, everything works (upgrade/check.sql), the next
#      uuidv7() is above the last one before, and the extension's objects
#      equal a fresh install's, definition by definition
#      (upgrade/objects.sql).
# Only on 15: the earlier releases were built for PostgreSQL 15 only.
# At the end the current library is back in place and the earlier
# releases' SQL files are removed again.
#   upgrade.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
# shellcheck source=../../../scripts/pg-env.sh
. "$root/scripts/pg-env.sh"
pg_env 15
fail() { echo "upgrade.sh: FAILED: $*" >&2; exit 1; }
cache="${UUIDFORGE_RELEASE_CACHE:-/var/cache/uuidforge/releases}"
current=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
recorded="$here/upgrade/released"
# Every release before this version, oldest first, with its commit. The
# list is committed (upgrade/released/RELEASES: "VERSION COMMIT" per line)
# rather than read from tags: a clone does not always carry tags, and every
# release commit is an ancestor of main, so any full clone has it.
declare -A release_commit=()
releases=()
while read -r v c; do
  [ -n "$v" ] && [ "${v:0:1}" != "#" ] || continue
  release_commit[$v]=$c
  [ "$(printf '%s\n%s\n' "$v" "$current" | sort -V | head -1)" = "$v" ] && [ "$v" != "$current" ] && releases+=("$v")
done < "$recorded/RELEASES"
[ "${#releases[@]}" -gt 0 ] || fail "no release before $current in $recorded/RELEASES"
# A tag that exists must name the listed commit.
for v in "${!release_commit[@]}"; do
  t=$(git -C "$root" rev-parse -q --verify "v$v^{commit}" 2>/dev/null) || continue
  [ "$t" = "${release_commit[$v]}" ] || fail "tag v$v is $t but $recorded/RELEASES says ${release_commit[$v]}"
done
mapfile -t releases < <(printf '%s\n' "${releases[@]}" | sort -V)
lib="$("$PG_CONFIG" --pkglibdir)"
ext="$("$PG_CONFIG" --sharedir)/extension"
work="$(mktemp -d /tmp/uuidforge-upgrade.XXXXXX)"
chmod 755 "$work"
chown postgres "$work"
data="$work/data"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
as_pg() { runuser -u postgres -- "$@"; }

[ -f "$ext/uuidforge--$current.sql" ] && [ -f "$lib/uuidforge.so" ] ||
  fail "uuidforge $current is not installed in PostgreSQL 15 ($ext/uuidforge--$current.sql): run scripts/pg-setup.sh first"
for script in "$here"/../sql/uuidforge--*--*.sql; do
  cmp -s "$script" "$ext/$(basename "$script")" ||
    fail "the installed $(basename "$script") is not the repository's: run scripts/pg-setup.sh first"
done
mkdir "$work/current"
cp "$lib/uuidforge.so" "$work/current/uuidforge.so"
placed=()
cleanup() {
  as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
  put_library "$work/current/uuidforge.so" || true
  for f in "${placed[@]}"; do rm -f "$f"; done
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

# The library is replaced by a rename, as a package manager does: a server
# that has the old file mapped keeps it until it restarts.
put_library() {
  cp "$1" "$lib/.uuidforge.so.new"
  mv -f "$lib/.uuidforge.so.new" "$lib/uuidforge.so"
}

# build_release VERSION: the directory holding that release's uuidforge.so
# and uuidforge--VERSION.sql, built from its commit on first use.
build_release() {
  "$root/scripts/release-build.sh" "$1"
}

# uses_up_to VERSION: upgrade/use-X.Y.Z.sql of every version up to VERSION.
uses_up_to() {
  local f v
  for f in $(ls "$here"/upgrade/use-*.sql | sort -V); do
    v=$(basename "$f" .sql)
    v=${v#use-}
    [ "$(printf '%s\n%s\n' "$v" "$1" | sort -V | head -1)" = "$v" ] && echo "$f"
  done
}

# The update to each intermediate release gives that release's objects.
step_through() { # step_through DB FROM
  local v
  for v in "${releases[@]}"; do
    [ "$(printf '%s\n%s\n' "$v" "$2" | sort -V | head -1)" = "$v" ] && continue
    sql "$1" "ALTER EXTENSION uuidforge UPDATE TO '$v'" 2>>"$work/$1.update"
    psql_ -d "$1" -f "$here/upgrade/objects.sql" >"$work/objects.$1.$v"
    same "updated from $2 to $v, the objects differ from those recorded for $v (- recorded, + updated)" \
      "$recorded/$v.objects" "$work/objects.$1.$v"
    echo "   updated to $v: objects equal those recorded for $v"
  done
}

start() { as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$work/log" -w -o "-p $port -k $work -c listen_addresses=''" start >/dev/null; }
stop() { as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null; }
psql_() { as_pg "$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -qAt -h "$work" -p "$port" "$@"; }
sql() { psql_ -d "$1" -c "$2"; }
same() { # same WHAT FILE1 FILE2
  diff -u "$2" "$3" >"$work/diff" || { head -60 "$work/diff" >&2; fail "$1"; }
}

as_pg "$PG_BIN/initdb" -D "$data" -A trust -U postgres >/dev/null
echo "shared_preload_libraries = 'uuidforge'" >>"$data/postgresql.conf"
start
sql postgres "CREATE DATABASE fresh"
sql fresh "CREATE EXTENSION uuidforge"
[ "$(sql fresh "SELECT extversion FROM pg_extension WHERE extname = 'uuidforge'")" = "$current" ] ||
  fail "a fresh install is not version $current"
psql_ -d fresh -f "$here/upgrade/objects.sql" >"$work/objects.fresh"
stop

# The objects of every released version are recorded: a change to the
# extension's SQL needs a new version and an upgrade script to it.
if [ -f "$recorded/$current.objects" ] && [ -z "${UUIDFORGE_ACCEPT_OBJECTS:-}" ]; then
  same "the extension's objects differ from those recorded for version $current (- recorded, + this build): \
a change to the extension's SQL needs a new version in Cargo.toml, sql/uuidforge--$current--NEW.sql, \
and the new version's objects recorded (UUIDFORGE_ACCEPT_OBJECTS=1 $0)" "$recorded/$current.objects" "$work/objects.fresh"
else
  previous=$(ls "$recorded" | sed -n 's/\.objects$//p' | sort -V | tail -1)
  [ -n "$previous" ] && [ "$previous" != "$current" ] && [ ! -f "$here/../sql/uuidforge--$previous--$current.sql" ] &&
    fail "version $current has no upgrade script from $previous: write crates/uuidforge-pg/sql/uuidforge--$previous--$current.sql"
  [ -n "${UUIDFORGE_ACCEPT_OBJECTS:-}" ] ||
    fail "no objects recorded for version $current: record them with UUIDFORGE_ACCEPT_OBJECTS=1 $0 (review them with git diff)"
  cp "$work/objects.fresh" "$recorded/$current.objects"
  echo "-- recorded the objects of $current in $recorded/$current.objects"
fi

# Each release's own install has the objects recorded for it.
for from in "${releases[@]}"; do
  dir=$(build_release "$from")
  put_library "$dir/uuidforge.so"
  cp "$dir/uuidforge--$from.sql" "$ext/uuidforge--$from.sql"
  placed+=("$ext/uuidforge--$from.sql")
  start
  db="own_${from//./_}"
  sql postgres "CREATE DATABASE $db"
  sql "$db" "CREATE EXTENSION uuidforge VERSION '$from'"
  psql_ -d "$db" -f "$here/upgrade/objects.sql" >"$work/objects.$db"
  if [ -n "${UUIDFORGE_ACCEPT_OBJECTS:-}" ] && [ ! -f "$recorded/$from.objects" ]; then
    cp "$work/objects.$db" "$recorded/$from.objects"
  fi
  same "release $from's own install differs from its recorded objects" "$recorded/$from.objects" "$work/objects.$db"
  stop
done
echo "-- every release's own install has its recorded objects: ${releases[*]}"

for from in "${releases[@]}"; do
  dir=$(build_release "$from")
  db="from_${from//./_}"
  echo "-- from $from: install it, use everything it offers"
  put_library "$dir/uuidforge.so"
  start
  sql postgres "CREATE DATABASE $db"
  sql "$db" "CREATE EXTENSION uuidforge VERSION '$from'"
  [ "$(sql "$db" "SELECT uuidv7_is_server_wide()")" = t ] || fail "$from: uuidv7() is not server-wide"
  for use in $(uses_up_to "$from"); do psql_ -d "$db" -f "$use" >/dev/null; done
  psql_ -d "$db" -f "$here/upgrade/digest.sql" >"$work/$db.before"
  last=$(sql "$db" "SELECT uuidv7()")
  echo "   $(wc -l <"$work/$db.before") relations, $(sql "$db" "SELECT count(*) FROM app.events") events; last uuidv7() $last"
  stop

  echo "-- from $from: the $current library installed, before the update"
  put_library "$work/current/uuidforge.so"
  start
  psql_ -d "$db" -f "$here/upgrade/digest.sql" >"$work/$db.between"
  same "$from: rows read differently under the $current library before the update" "$work/$db.before" "$work/$db.between"
  checked=$(psql_ -d "$db" -f "$here/upgrade/amcheck.sql") || fail "$from: amcheck before the update"
  echo "   rows identical; $checked"

  echo "-- from $from: ALTER EXTENSION uuidforge UPDATE"
  step_through "$db" "$from"
  psql_ -d "$db" -c "ALTER EXTENSION uuidforge UPDATE" 2>>"$work/$db.update" ||
    { cat "$work/$db.update" >&2; fail "$from: ALTER EXTENSION UPDATE"; }
  sed 's/^/   /' "$work/$db.update"
  [ "$(sql "$db" "SELECT extversion FROM pg_extension WHERE extname = 'uuidforge'")" = "$current" ] ||
    fail "$from: not at $current after the update"
  # The step to 0.3.0 changed what uuid_extract_timestamp answers for v6:
  # an update through it rebuilds and names what stored the old answers.
  if [ "$(printf '%s\n0.3.0\n' "$from" | sort -V | head -1)" != 0.3.0 ]; then
    grep -q 'rebuilding index app.events_v6_time' "$work/$db.update" || fail "$from: the index over v6 times was not rebuilt"
    for told in 'generated column app.events.v6_at' 'CHECK constraint events_v6_recent on app.events' 'materialized view app.event_times'; do
      grep -q "$told" "$work/$db.update" || fail "$from: the update did not name the $told (it stores v6 times)"
    done
  fi
  psql_ -d "$db" -f "$here/upgrade/digest.sql" >"$work/$db.after"
  # The tables the update adds (the profile table of 0.2.0) come empty.
  cut -d'|' -f1 "$work/$db.before" | sed 's/$/|/' >"$work/$db.names"
  if grep -v -F -f "$work/$db.names" "$work/$db.after" | grep -v '|0|d41d8cd98f00b204e9800998ecf8427e$'; then
    fail "$from: the update added a relation with rows"
  fi
  grep -F -f "$work/$db.names" "$work/$db.after" >"$work/$db.kept"
  same "$from: rows differ after the update" "$work/$db.before" "$work/$db.kept"
  checked=$(psql_ -d "$db" -f "$here/upgrade/amcheck.sql") || fail "$from: amcheck after the update"
  echo "   rows identical ($(wc -l <"$work/$db.after") relations); $checked"
  # What arrived by the update works on the upgraded database too.
  for use in $(uses_up_to "$current"); do
    grep -qxF "$use" <(uses_up_to "$from") || psql_ -d "$db" -f "$use" >/dev/null
  done
  psql_ -d "$db" -f "$here/upgrade/check.sql" >/dev/null
  [ "$(sql "$db" "SELECT uuidv7() > '$last'::uuid")" = t ] || fail "$from: the next uuidv7() is not above $last"
  echo "   everything works; the next uuidv7() is above $last"
  psql_ -d "$db" -f "$here/upgrade/objects.sql" >"$work/objects.$db"
  same "$from: the extension's objects after the update differ from a fresh $current install (- fresh, + updated)" \
    "$work/objects.fresh" "$work/objects.$db"
  echo "   objects equal a fresh $current install: $(grep -c -E '^(function|aggregate|type|operator|cast|table|event trigger|other) ' "$work/objects.$db") compared"
  stop
done
echo "upgrade.sh: passed (${releases[*]} -> $current)"
