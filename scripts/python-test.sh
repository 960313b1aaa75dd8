#!/usr/bin/env bash
# The Python package's tests: builds the wheel (scripts/python-build.sh),
# installs it and the test requirements into a fresh virtual environment
# (target/python/test-venv, made again each run), and runs pytest on
# python/tests — against the wheel, not the source tree. The database
# tests use the test PostgreSQL server on $UUIDFORGE_TEST_PGPORT (5432 by
# default; scripts/pg-setup.sh starts it and makes its roles), and the
# tests that compare with the command line use the workspace's binary.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
./scripts/python-build.sh
if [ -z "${UUIDFORGE_BIN:-}" ]; then
  cargo build --quiet -p uuidforge-cli
  export UUIDFORGE_BIN="$PWD/target/debug/uuidforge"
fi
VENV=target/python/test-venv
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check -r python/tests/requirements.txt target/wheels/uuidforge-*.whl
cd python/tests
exec "../../$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
