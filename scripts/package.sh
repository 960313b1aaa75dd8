#!/usr/bin/env bash
# Packages for the servers that take extensions and for the command line,
# built from this checkout into target/packages:
#   postgresql-15-uuidforge_VERSION_amd64.deb  the extension for Debian's
#       PostgreSQL 15 (depends on postgresql-15): apt-get install ./file.deb
#   uuidforge-pg18-VERSION-linux-x86_64.tar.gz  the extension for
#       PostgreSQL 18, any build of it: unpack, then ./install.sh with that
#       server's pg_config first on PATH (or PG_CONFIG=...), which copies
#       the files into its pg_config --pkglibdir and --sharedir/extension
#       (./install.sh --uninstall takes them out again)
#   mariadb-plugin-uuidforge_VERSION_amd64.deb  the functions for Debian's
#       MariaDB (depends on mariadb-server): the library in
#       /usr/lib/mysql/plugin, install.sql and uninstall.sql in
#       /usr/share/uuidforge-mariadb (mariadb < .../install.sql)
#   uuidforge_VERSION_amd64.deb  the command line: /usr/bin/uuidforge, a
#       man page per subcommand, bash, zsh and fish completions, and the
#       SQL edition's script (/usr/share/uuidforge/uuidforge-sql.sql) for
#       servers that refuse custom extensions
# Options:
#   --only deb15|tar18|mariadb|cli  build that one only (repeatable)
#   --release VERSION       instead: the Debian package of an earlier
#                           release of the extension for PostgreSQL 15 (its
#                           commit in crates/uuidforge-pg/tests/upgrade/
#                           released/RELEASES): what a user updates from
#   --cli-binary PATH       package this uuidforge binary rather than build
#                           a release one (default: $UUIDFORGE_BIN when set,
#                           the binary the test command's tests built)
# Needs, checked before anything is built: dpkg-deb; for deb15 cargo-pgrx
# and PostgreSQL 15's server headers (scripts/pg-setup.sh); for tar18 a
# PostgreSQL 18 (scripts/pg-setup.sh --pg 18). Without one, leave that
# package out with --only.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. scripts/pg-env.sh
only=() release="" cli_binary=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --only) only+=("$2"); shift 2 ;;
    --release) release="$2"; shift 2 ;;
    --cli-binary) cli_binary="$2"; shift 2 ;;
    *) echo "package.sh: unknown option '$1' (expected --only deb15|tar18|mariadb|cli, --release VERSION or --cli-binary PATH)" >&2; exit 2 ;;
  esac
done
[ "${#only[@]}" -gt 0 ] || only=(deb15 tar18 cli)
cli_binary="${cli_binary:-${UUIDFORGE_BIN:-}}"
# What each package needs, checked before anything is built.
missing=()
command -v dpkg-deb >/dev/null || missing+=("dpkg-deb (apt-get install dpkg)")
for what in "${only[@]}"; do
  case "$what" in
    deb15)
      pg_env 15
      { cargo pgrx --version >/dev/null 2>&1 && [ -f "$("$PG_CONFIG" --includedir-server 2>/dev/null)/postgres.h" ]; } ||
        missing+=("deb15: cargo-pgrx and PostgreSQL 15's server headers (./scripts/pg-setup.sh)")
      ;;
    tar18)
      pg_env 18
      [ -n "$PG_CONFIG" ] || missing+=("tar18: a PostgreSQL 18 (./scripts/pg-setup.sh --pg 18)")
      ;;
  esac
done
if [ "${#missing[@]}" -gt 0 ] && [ -z "$release" ]; then
  printf 'package.sh: missing, so nothing was built:\n' >&2
  printf '  %s\n' "${missing[@]}" >&2
  printf 'Set it up, or build the other packages alone: --only deb15, --only tar18, --only cli (repeatable).\n' >&2
  exit 2
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
out=target/packages
mkdir -p "$out"
work=$(mktemp -d /tmp/uuidforge-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
say() { echo "== package: $*"; }
maintainer="uuidforge developers <uuidforge@example.invalid>"

# deb NAME VERSION STAGE DEPENDS DESCRIPTION: target/packages/NAME_VERSION_amd64.deb
# from the files under STAGE (root-owned, directories 755, files 644).
deb() {
  local name=$1 v=$2 stage=$3 depends=$4 description=$5 file
  mkdir -p "$stage/DEBIAN"
  cat >"$stage/DEBIAN/control" <<CONTROL
Package: $name
Version: $v
Architecture: amd64
Maintainer: $maintainer
Depends: $depends
Section: database
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Description: $description
CONTROL
  find "$stage" -type d -exec chmod 755 {} +
  find "$stage" -type f ! -path "$stage/DEBIAN/*" -exec chmod 644 {} +
  [ -d "$stage/usr/bin" ] && chmod 755 "$stage"/usr/bin/*
  file="$out/${name}_${v}_amd64.deb"
  dpkg-deb --root-owner-group -Zxz --build "$stage" "$file" >/dev/null
  say "$file ($(du -h "$file" | cut -f1))"
}

# The extension's files for the server of pg_config $1 and features $2,
# laid out under $3 by that server's directories (cargo pgrx package).
extension_files() {
  local pg_config=$1 feature=$2 dest=$3
  (cd crates/uuidforge-pg && cargo pgrx package --pg-config "$pg_config" \
    --no-default-features --features "$feature" --out-dir "$dest" 2>&1) \
    | grep -v '^ *Compiling' | grep -iE 'error|warning: unused' || true
  [ -f "$dest$("$pg_config" --pkglibdir)/uuidforge.so" ] ||
    { echo "package.sh: cargo pgrx package made no uuidforge.so for $pg_config" >&2; exit 1; }
}

if [ -n "$release" ]; then
  # An earlier release: its own build, control file and upgrade scripts.
  dir=$(scripts/release-build.sh "$release")
  pg_env 15
  stage="$work/release"
  lib="$stage$("$PG_CONFIG" --pkglibdir)"
  ext="$stage$("$PG_CONFIG" --sharedir)/extension"
  mkdir -p "$lib" "$ext"
  cp "$dir/uuidforge.so" "$lib/"
  cp "$dir/uuidforge.control" "$dir/uuidforge--$release.sql" "$ext/"
  cp "$dir"/sql/*.sql "$ext/" 2>/dev/null || true
  deb postgresql-15-uuidforge "$release" "$stage" "postgresql-15" \
    "UUIDv7 keys for PostgreSQL 15 (uuidforge extension, release $release)"
  exit 0
fi

for what in "${only[@]}"; do
  case "$what" in
    deb15)
      pg_env 15
      stage="$work/deb15"
      extension_files "$PG_CONFIG" pg15 "$stage"
      deb postgresql-15-uuidforge "$version" "$stage" "postgresql-15" \
        "UUIDv7 keys for PostgreSQL 15 (uuidforge extension)
 Server-wide monotonic uuidv7() (with shared_preload_libraries = uuidforge),
 the uuidv7_gen column type, uuid192, bounds and partition keys, and
 PostgreSQL 18's UUID functions. CREATE EXTENSION uuidforge;"
      ;;
    tar18)
      pg_env 18
      [ -n "$PG_CONFIG" ] || { echo "package.sh: no PostgreSQL 18 here (scripts/pg-setup.sh --pg 18)" >&2; exit 1; }
      built="$work/tar18-built"
      extension_files "$PG_CONFIG" pg18 "$built"
      name="uuidforge-pg18-$version-linux-x86_64"
      stage="$work/$name"
      mkdir -p "$stage/pkglibdir" "$stage/sharedir/extension"
      cp "$built$("$PG_CONFIG" --pkglibdir)/uuidforge.so" "$stage/pkglibdir/"
      cp "$built$("$PG_CONFIG" --sharedir)"/extension/uuidforge* "$stage/sharedir/extension/"
      cat >"$stage/install.sh" <<'INSTALL'
#!/bin/sh
# Installs the uuidforge extension into the PostgreSQL 18 whose pg_config
# is PG_CONFIG (default: the first on PATH): pkglibdir/ into its
# `pg_config --pkglibdir`, sharedir/extension/ into its
# `pg_config --sharedir`/extension. Then: CREATE EXTENSION uuidforge;
#   ./install.sh [--uninstall]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pg_config=${PG_CONFIG:-pg_config}
major=$("$pg_config" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
[ "$major" = 18 ] || { echo "install.sh: $pg_config is PostgreSQL $major (expected 18)" >&2; exit 1; }
lib=$("$pg_config" --pkglibdir)
ext=$("$pg_config" --sharedir)/extension
if [ "${1:-}" = --uninstall ]; then
  rm -f "$lib/uuidforge.so" "$ext"/uuidforge.control "$ext"/uuidforge--*.sql
  echo "uuidforge removed from $lib and $ext"
  exit 0
fi
# The library by a rename, as a package manager does: a running server
# keeps the file it has mapped until it restarts.
cp "$here/pkglibdir/uuidforge.so" "$lib/.uuidforge.so.new"
chmod 755 "$lib/.uuidforge.so.new"
mv -f "$lib/.uuidforge.so.new" "$lib/uuidforge.so"
cp "$here"/sharedir/extension/* "$ext/"
chmod 644 "$ext"/uuidforge.control "$ext"/uuidforge--*.sql
echo "uuidforge installed into $lib and $ext: CREATE EXTENSION uuidforge;"
INSTALL
      chmod 755 "$stage/install.sh"
      tar -C "$work" --owner=0 --group=0 -czf "$out/$name.tar.gz" "$name"
      say "$out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1))"
      ;;
    mariadb)
      cargo build --release --quiet -p uuidforge-mysql
      stage="$work/mariadb"
      mkdir -p "$stage/usr/lib/mysql/plugin" "$stage/usr/share/uuidforge-mariadb"
      install -m 644 target/release/libuuidforge_mysql.so "$stage/usr/lib/mysql/plugin/"
      install -m 644 crates/uuidforge-mysql/sql/install.sql crates/uuidforge-mysql/sql/uninstall.sql \
        "$stage/usr/share/uuidforge-mariadb/"
      deb mariadb-plugin-uuidforge "$version" "$stage" "mariadb-server" \
        "UUIDv7 functions for MariaDB (uuidforge)
 uuidv7() strictly increasing across every connection of the server,
 uuidv7_bin(), uuidv7_at(), uuidv7_from(), uuid_v7_timestamp(), bounds of
 a time and converters between text, RFC-order and swapped BINARY(16).
 mariadb < /usr/share/uuidforge-mariadb/install.sql"
      ;;
    cli)
      if [ -z "$cli_binary" ]; then
        cargo build --release --quiet -p uuidforge-cli
        cli_binary=target/release/uuidforge
      fi
      stage="$work/cli"
      mkdir -p "$stage/usr/bin" "$stage/usr/share/man/man1" "$stage/usr/share/uuidforge" \
        "$stage/usr/share/bash-completion/completions" "$stage/usr/share/zsh/vendor-completions" \
        "$stage/usr/share/fish/vendor_completions.d" "$stage/usr/share/doc/uuidforge"
      cp "$cli_binary" "$stage/usr/bin/uuidforge"
      "$cli_binary" man --dir "$stage/usr/share/man/man1" >/dev/null
      gzip -9n "$stage"/usr/share/man/man1/*.1
      "$cli_binary" completions bash >"$stage/usr/share/bash-completion/completions/uuidforge"
      "$cli_binary" completions zsh >"$stage/usr/share/zsh/vendor-completions/_uuidforge"
      "$cli_binary" completions fish >"$stage/usr/share/fish/vendor_completions.d/uuidforge.fish"
      "$cli_binary" db install-sql --sql-only >"$stage/usr/share/uuidforge/uuidforge-sql.sql"
      cp README.md docs/INSTALL.md "$stage/usr/share/doc/uuidforge/"
      deb uuidforge "$version" "$stage" "libc6 (>= 2.31)" \
        "UUIDv7 keys for databases and distributed systems (command line)
 Generates, inspects, converts and validates UUIDs (RFC 9562), finds them in
 documents and databases, and migrates PostgreSQL keys to UUIDv7."
      ;;
    *) echo "package.sh: --only takes deb15, tar18, mariadb or cli (not '$what')" >&2; exit 2 ;;
  esac
done
