#!/usr/bin/env bash
# Builds the Python package's wheel — one abi3 wheel for CPython 3.9 and
# later — into target/wheels, with maturin from PyPI in a virtual
# environment of its own (target/python/build-venv). Then:
#   pip install target/wheels/uuidforge-*.whl
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV=target/python/build-venv
if ! "$VENV/bin/maturin" --version >/dev/null 2>&1; then
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check 'maturin>=1.16,<2'
fi
rm -f target/wheels/uuidforge-*.whl
echo "python-build.sh: building the wheel (a release build: about 2 minutes the first time)"
(cd python && "../$VENV/bin/maturin" build --release --out ../target/wheels)
ls target/wheels/uuidforge-*.whl
