#!/usr/bin/env bash
# uuidforge for Python against uuid-utils, fastuuid, uuid6, python-ulid and
# the standard library, in one run, in one virtual environment
# (target/python/bench-venv): per-call times and ratios for one uuid7(), a
# batch of 10 000, parsing the canonical form, and Crockford Base32.
#   ./scripts/bench-python.sh [--short]
# --short: tiny counts, one round (run by the test command so that the
# benchmark keeps working).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
./scripts/python-build.sh >/dev/null
VENV=target/python/bench-venv
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check \
  'uuid-utils>=0.11' 'fastuuid>=0.12' 'uuid6>=2024.7' 'python-ulid>=3'
"$VENV/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps target/wheels/uuidforge-*.whl
exec "$VENV/bin/python" python/bench/bench_python.py "$@"
