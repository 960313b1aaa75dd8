#!/usr/bin/env bash
# The MariaDB of the tests: Debian's mariadb-server (installed when
# missing, its own service kept from starting), run as a server of ours on
# 127.0.0.1:3307 with its own data directory and socket under
# /var/lib/uuidforge-mariadb, the uuidforge functions installed from this
# checkout's Debian package (scripts/package.sh --only mariadb, installed
# with dpkg, then its install.sql), and brought to the test state every
# run: started again (so the library it has loaded is the package's), no
# database uf_* left by an earlier run, the users uuidforge (the
# application's: every privilege on uf_* databases) and uuidforge_admin
# (all privileges), password uuidforge, over TCP. Prints the settings last:
#   UUIDFORGE_TEST_MARIADB=mysql://uuidforge:uuidforge@127.0.0.1:3307
#   scripts/mariadb-setup.sh [--stop]
set -euo pipefail
cd "$(dirname "$0")/.."
base=/var/lib/uuidforge-mariadb
data=$base/data sock=$base/mysqld.sock pidfile=$base/mysqld.pid port=3307
say() { echo "== mariadb-setup: $*"; }
running() { mariadb-admin --socket="$sock" -uroot ping >/dev/null 2>&1; }
stop() {
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    mariadb-admin --socket="$sock" -uroot shutdown 2>/dev/null || kill "$(cat "$pidfile")"
    for _ in $(seq 1 60); do kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null || break; sleep 0.5; done
  fi
}
if [ "${1:-}" = --stop ]; then stop; exit 0; fi

if ! command -v mariadbd >/dev/null || ! command -v mariadb >/dev/null; then
  say "installing Debian's mariadb-server (its own service kept from starting)"
  # A policy that denies every service start for the install's duration.
  policy=/usr/sbin/policy-rc.d
  had_policy=0; [ -e "$policy" ] && had_policy=1
  [ "$had_policy" = 1 ] || { printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod 755 "$policy"; }
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server mariadb-client >/dev/null
  [ "$had_policy" = 1 ] || rm -f "$policy"
fi
say "$(mariadbd --version)"

say "building the package (scripts/package.sh --only mariadb) and installing it"
./scripts/package.sh --only mariadb
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
dpkg -i "target/packages/mariadb-plugin-uuidforge_${version}_amd64.deb" >/dev/null

stop
mkdir -p "$base"
chown mysql:mysql "$base"
if [ ! -d "$data/mysql" ]; then
  say "a data directory in $data"
  mariadb-install-db --user=mysql --datadir="$data" --auth-root-authentication-method=socket \
    --skip-test-db >"$base/install-db.log" 2>&1 || { cat "$base/install-db.log"; exit 1; }
fi
say "starting on 127.0.0.1:$port (socket $sock)"
# setsid: the server outlives this script and the test step.
setsid mariadbd --user=mysql --datadir="$data" --socket="$sock" --port="$port" \
  --bind-address=127.0.0.1 --pid-file="$pidfile" --log-error="$base/error.log" \
  --skip-name-resolve --max-connections=200 --innodb-buffer-pool-size=256M \
  </dev/null >/dev/null 2>&1 &
for _ in $(seq 1 120); do running && break; sleep 0.5; done
running || { tail -n 30 "$base/error.log"; exit 1; }

q() { mariadb --socket="$sock" -uroot -N -B -e "$1"; }
for db in $(q "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'uf\\_%'"); do
  q "DROP DATABASE \`$db\`"
done
q "CREATE USER IF NOT EXISTS 'uuidforge'@'%' IDENTIFIED BY 'uuidforge';
   ALTER USER 'uuidforge'@'%' IDENTIFIED BY 'uuidforge';
   GRANT ALL PRIVILEGES ON \`uf\\_%\`.* TO 'uuidforge'@'%';
   CREATE USER IF NOT EXISTS 'uuidforge_admin'@'%' IDENTIFIED BY 'uuidforge';
   ALTER USER 'uuidforge_admin'@'%' IDENTIFIED BY 'uuidforge';
   GRANT ALL PRIVILEGES ON *.* TO 'uuidforge_admin'@'%' WITH GRANT OPTION;"
# The functions from the package's own script (dropped first: a function
# made by an earlier build stays as it was declared).
mariadb --socket="$sock" -uroot </usr/share/uuidforge-mariadb/uninstall.sql
mariadb --socket="$sock" -uroot </usr/share/uuidforge-mariadb/install.sql
say "set: MariaDB $(q 'SELECT VERSION()') on port $port, $(q "SELECT count(*) FROM mysql.func WHERE dl = 'libuuidforge_mysql.so'") uuidforge functions"
echo "UUIDFORGE_TEST_MARIADB=mysql://uuidforge:uuidforge@127.0.0.1:$port"
