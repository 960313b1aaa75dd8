#!/usr/bin/env bash
# The packages of scripts/package.sh, installed as a DBA installs them,
# into servers that never had a developer build:
#   0. docs/INSTALL.md, every block as written (scripts/docs_test.py):
#      building the packages, the 15 package installed, created, preloaded
#      and removed, the 18 tarball installed and removed, the command
#      line's package, the SQL edition on a managed-like database;
#   1. PostgreSQL 15 (Debian's): the developer install's files are taken
#      out first (and put back at the end); the previous release's package
#      (0.2.0) is installed with apt-get, CREATE EXTENSION makes it; this
#      release's package replaces it, ALTER EXTENSION uuidforge UPDATE
#      brings the database to it, the extension's regression suite passes;
#      apt-get purge leaves none of its files and CREATE EXTENSION fails
#      again.
#   2. PostgreSQL 18 without the extension (scripts/pg-setup.sh --pg
#      18bare): the tarball's install.sh with that server's pg_config,
#      CREATE EXTENSION, the regression suite, install.sh --uninstall.
#   3. The command line's package: the binary, a man page per subcommand,
#      bash, zsh and fish completions, the SQL edition's script (run with
#      psql on the server without the extension); purged, nothing left.
# Usage: scripts/package-test.sh   (after scripts/pg-setup.sh, --pg 18 and
#        --pg 18bare; UUIDFORGE_BIN: the command line to package, else a
#        release build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. scripts/pg-env.sh
say() { echo "== package-test: $*"; }
fail() { echo "package-test: FAILED: $*" >&2; exit 1; }
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
previous=0.2.0
out=target/packages

say "building the previous release's package (scripts/package.sh --release $previous)"
./scripts/package.sh --release "$previous"

# ---- 1. PostgreSQL 15 from the Debian packages
pg_env 15
lib=$("$PG_CONFIG" --pkglibdir)
ext=$("$PG_CONFIG" --sharedir)/extension
psql15() { runuser -u postgres -- "$PG_BIN/psql" -h "$PG_SOCKET" -p "$PG_PORT" -X -v ON_ERROR_STOP=1 -qAt "$@"; }
saved=$(mktemp -d /tmp/uuidforge-devinstall.XXXXXX)
restore() {
  dpkg -s postgresql-15-uuidforge >/dev/null 2>&1 && apt-get purge -y -qq postgresql-15-uuidforge >/dev/null 2>&1
  if [ -f "$saved/uuidforge.so" ]; then
    cp "$saved/uuidforge.so" "$lib/.uuidforge.so.new" && mv -f "$lib/.uuidforge.so.new" "$lib/uuidforge.so"
    cp "$saved"/extension/* "$ext/"
  fi
  rm -rf "$saved"
}
trap restore EXIT
say "PostgreSQL 15: the developer install's files taken out (kept in $saved)"
mkdir -p "$saved/extension"
cp "$lib/uuidforge.so" "$saved/"
cp "$ext"/uuidforge.control "$ext"/uuidforge--*.sql "$saved/extension/"
rm -f "$lib/uuidforge.so" "$ext"/uuidforge.control "$ext"/uuidforge--*.sql
psql15 -d postgres -c "DROP DATABASE IF EXISTS uuidforge_package" -c "CREATE DATABASE uuidforge_package"
if psql15 -d uuidforge_package -c "CREATE EXTENSION uuidforge" 2>/dev/null; then
  fail "CREATE EXTENSION worked with the developer install taken out"
fi

say "docs/INSTALL.md as written (it builds this release's packages with scripts/package.sh)"
python3 scripts/docs_test.py docs/INSTALL.md
for package in "postgresql-15-uuidforge_${version}_amd64.deb" "uuidforge-pg18-$version-linux-x86_64.tar.gz" "uuidforge_${version}_amd64.deb"; do
  [ -f "$out/$package" ] || fail "docs/INSTALL.md's road made no $out/$package"
done
dpkg -s postgresql-15-uuidforge >/dev/null 2>&1 && fail "docs/INSTALL.md's removal left postgresql-15-uuidforge installed"
[ "$(psql15 -d postgres -c "SHOW shared_preload_libraries")" = "" ] || fail "docs/INSTALL.md's removal left uuidforge preloaded"

say "PostgreSQL 15: apt-get install ./$out/postgresql-15-uuidforge_${previous}_amd64.deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$out/postgresql-15-uuidforge_${previous}_amd64.deb" >/dev/null
psql15 -d uuidforge_package -c "CREATE EXTENSION uuidforge"
[ "$(psql15 -d uuidforge_package -c "SELECT extversion FROM pg_extension WHERE extname = 'uuidforge'")" = "$previous" ] ||
  fail "the $previous package did not make version $previous"
psql15 -d uuidforge_package -c "CREATE TABLE t (id uuid PRIMARY KEY DEFAULT uuidv7(), n int); INSERT INTO t (n) SELECT generate_series(1, 1000)"

say "PostgreSQL 15: apt-get install ./$out/postgresql-15-uuidforge_${version}_amd64.deb (over $previous), ALTER EXTENSION uuidforge UPDATE"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$out/postgresql-15-uuidforge_${version}_amd64.deb" >/dev/null
[ "$(dpkg-query -W -f '${Version}' postgresql-15-uuidforge)" = "$version" ] || fail "dpkg does not list $version"
psql15 -d uuidforge_package -c "ALTER EXTENSION uuidforge UPDATE"
[ "$(psql15 -d uuidforge_package -c "SELECT extversion FROM pg_extension WHERE extname = 'uuidforge'")" = "$version" ] ||
  fail "ALTER EXTENSION UPDATE did not reach $version"
[ "$(psql15 -d uuidforge_package -c "SELECT count(*) FROM t WHERE uuid_extract_version(id) = 7")" = 1000 ] ||
  fail "the rows made under $previous do not read as UUIDv7 under $version"
psql15 -d uuidforge_package -c "INSERT INTO t (n) VALUES (0)"
[ "$(psql15 -d uuidforge_package -c "SELECT (SELECT id FROM t WHERE n = 0) > ALL (SELECT id FROM t WHERE n > 0)")" = t ] ||
  fail "the first UUIDv7 after the update is not above the earlier ones"
say "PostgreSQL 15: the regression suite on the package's extension"
crates/uuidforge-pg/tests/regress.sh 15

say "PostgreSQL 15: apt-get purge postgresql-15-uuidforge"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq postgresql-15-uuidforge >/dev/null
left=$(ls "$lib"/uuidforge.so "$ext"/uuidforge* 2>/dev/null || true)
[ -z "$left" ] || fail "files left after purge: $left"
psql15 -d postgres -c "DROP DATABASE uuidforge_package"
psql15 -d postgres -c "CREATE DATABASE uuidforge_package"
if psql15 -d uuidforge_package -c "CREATE EXTENSION uuidforge" 2>/dev/null; then
  fail "CREATE EXTENSION worked after the package was purged"
fi
psql15 -d postgres -c "DROP DATABASE uuidforge_package"
restore
trap - EXIT

# ---- 2. PostgreSQL 18 from the tarball, on a server without the extension
pg_env 18bare
[ -n "$PG_CONFIG" ] || fail "no PostgreSQL 18 without the extension (scripts/pg-setup.sh --pg 18bare)"
lib18=$("$PG_CONFIG" --pkglibdir)
ext18=$("$PG_CONFIG" --sharedir)/extension
[ ! -e "$lib18/uuidforge.so" ] || fail "the 18bare server has uuidforge.so: it must never get a developer build"
psql18() { runuser -u postgres -- "$PG_BIN/psql" -h "$PG_SOCKET" -p "$PG_PORT" -X -v ON_ERROR_STOP=1 -qAt "$@"; }
unpacked=$(mktemp -d /tmp/uuidforge-tarball.XXXXXX)
uninstall18() { PG_CONFIG="$PG_CONFIG" "$unpacked"/uuidforge-pg18-*/install.sh --uninstall >/dev/null 2>&1 || true; rm -rf "$unpacked"; }
trap uninstall18 EXIT
tar -xzf "$out/uuidforge-pg18-$version-linux-x86_64.tar.gz" -C "$unpacked"
say "PostgreSQL 18 (no extension before): install.sh from the tarball"
PG_CONFIG="$PG_CONFIG" "$unpacked/uuidforge-pg18-$version-linux-x86_64/install.sh"
say "PostgreSQL 18: the regression suite on the tarball's extension"
crates/uuidforge-pg/tests/regress.sh 18bare
PG_CONFIG="$PG_CONFIG" "$unpacked/uuidforge-pg18-$version-linux-x86_64/install.sh" --uninstall
left=$(ls "$lib18"/uuidforge.so "$ext18"/uuidforge* 2>/dev/null || true)
[ -z "$left" ] || fail "files left after install.sh --uninstall: $left"
rm -rf "$unpacked"
trap - EXIT

# ---- 3. The command line's package
say "the command line: apt-get install ./$out/uuidforge_${version}_amd64.deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$out/uuidforge_${version}_amd64.deb" >/dev/null
trap 'apt-get purge -y -qq uuidforge >/dev/null 2>&1 || true' EXIT
[ "$(command -v uuidforge)" = /usr/bin/uuidforge ] || fail "uuidforge is not /usr/bin/uuidforge"
/usr/bin/uuidforge gen -n 3 --version 7 | grep -cE '^[0-9a-f]{8}-[0-9a-f]{4}-7' | grep -qx 3 || fail "uuidforge gen"
for page in uuidforge uuidforge-gen uuidforge-db-migrate-key uuidforge-db-install-sql; do
  [ -s "/usr/share/man/man1/$page.1.gz" ] || fail "no man page $page"
done
pages=$(ls /usr/share/man/man1/uuidforge*.1.gz | wc -l)
bash -c '. /usr/share/bash-completion/completions/uuidforge && complete -p uuidforge' >/dev/null || fail "bash completion"
grep -q '#compdef uuidforge' /usr/share/zsh/vendor-completions/_uuidforge || fail "zsh completion"
grep -q 'complete -c uuidforge' /usr/share/fish/vendor_completions.d/uuidforge.fish || fail "fish completion"
say "the command line: $pages man pages, completions for bash, zsh and fish"
pg_env 18bare
psql18 -d postgres -c "DROP DATABASE IF EXISTS uuidforge_package" -c "CREATE DATABASE uuidforge_package"
psql18 -d uuidforge_package -f /usr/share/uuidforge/uuidforge-sql.sql >/dev/null
[ "$(psql18 -d uuidforge_package -c "SELECT uuidforge.uuidv7_from('2022-02-22 19:22:22+00', 'orders:42')")" = 017f22e2-79b0-7496-923e-225cc233cada ] ||
  fail "the packaged SQL edition's uuidv7_from"
psql18 -d postgres -c "DROP DATABASE uuidforge_package"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq uuidforge >/dev/null
trap - EXIT
left=$(ls /usr/bin/uuidforge /usr/share/man/man1/uuidforge* /usr/share/uuidforge /usr/share/bash-completion/completions/uuidforge 2>/dev/null || true)
[ -z "$left" ] || fail "files left after purge: $left"
say "passed: postgresql-15-uuidforge $previous -> $version, uuidforge-pg18 $version, uuidforge $version"
