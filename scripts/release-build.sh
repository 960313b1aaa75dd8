#!/usr/bin/env bash
# The extension of an earlier release for PostgreSQL 15, built once from
# its commit (crates/uuidforge-pg/tests/upgrade/released/RELEASES: "VERSION
# COMMIT" per line) with cargo pgrx package and kept under
# $UUIDFORGE_RELEASE_CACHE (default /var/cache/uuidforge/releases). Prints
# the directory holding its uuidforge.so, uuidforge--VERSION.sql, its
# control file and its upgrade scripts (sql/). Used by the extension's
# upgrade test and by scripts/package.sh --release.
#   scripts/release-build.sh VERSION
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="${1:?usage: release-build.sh VERSION}"
. "$root/scripts/pg-env.sh"
pg_env 15
fail() { echo "release-build.sh: FAILED: $*" >&2; exit 1; }
commit=$(awk -v v="$version" '$1 == v { print $2 }' "$root/crates/uuidforge-pg/tests/upgrade/released/RELEASES")
[ -n "$commit" ] || fail "no release $version in crates/uuidforge-pg/tests/upgrade/released/RELEASES"
git -C "$root" cat-file -e "$commit^{commit}" 2>/dev/null ||
  fail "release $version's commit $commit is not in $root (a shallow clone? git fetch --unshallow)"
cache="${UUIDFORGE_RELEASE_CACHE:-/var/cache/uuidforge/releases}"
dir="$cache/$version-${commit:0:12}-pg15"
if [ ! -f "$dir/uuidforge.so" ]; then
  echo "-- building release $version (commit ${commit:0:12}) into $dir" >&2
  work="$(mktemp -d /tmp/uuidforge-release.XXXXXX)"
  trap 'rm -rf "$work"' EXIT
  src="$work/src"
  mkdir -p "$src" "$cache"
  git -C "$root" archive "$commit" | tar -x -C "$src"
  # Those releases said 0.1.0 in Cargo.toml; the commit is the release.
  (cd "$src" && CARGO_TARGET_DIR="$cache/target" cargo pgrx package -p uuidforge-pg \
    --pg-config "$PG_CONFIG" --debug --out-dir "$src/out") >"$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log" >&2; fail "building release $version"; }
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  cp "$(find "$src/out" -name uuidforge.so)" "$dir.tmp/uuidforge.so"
  cp "$(find "$src/out" -name 'uuidforge--*.sql' ! -name 'uuidforge--*--*.sql' | head -1)" "$dir.tmp/uuidforge--$version.sql"
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
fi
# Its control file and upgrade scripts, as the commit has them.
if [ ! -f "$dir/uuidforge.control" ]; then
  mkdir -p "$dir/sql"
  git -C "$root" show "$commit:crates/uuidforge-pg/uuidforge.control" |
    sed "s/@CARGO_VERSION@/$version/" >"$dir/uuidforge.control.tmp"
  for f in $(git -C "$root" ls-tree --name-only "$commit" crates/uuidforge-pg/sql/ | grep -- '--.*--'); do
    git -C "$root" show "$commit:$f" >"$dir/sql/$(basename "$f")"
  done
  mv "$dir/uuidforge.control.tmp" "$dir/uuidforge.control"
fi
echo "$dir"
