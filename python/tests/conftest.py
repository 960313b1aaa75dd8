"""Fixtures: the uuidforge command line built from this workspace, and a
fresh PostgreSQL database on the test server (scripts/pg-setup.sh makes
its roles; scripts/python-test.sh starts it)."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli() -> str:
    """The `uuidforge` binary: $UUIDFORGE_BIN, else the workspace's build."""
    given = os.environ.get("UUIDFORGE_BIN")
    candidates = [given] if given else [
        str(ROOT / "target" / "release" / "uuidforge"),
        str(ROOT / "target" / "debug" / "uuidforge"),
    ]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    raise RuntimeError(
        f"no uuidforge binary at {candidates}: build it (cargo build -p uuidforge-cli) "
        "or set UUIDFORGE_BIN (scripts/python-test.sh does)"
    )


def run_cli(cli: str, *args: str, input: bytes | None = None) -> str:
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-uuidforge-test")
    env.pop("UUIDFORGE_PROFILE", None)
    env.pop("UUIDFORGE_FORMAT", None)
    done = subprocess.run([cli, *args], input=input, capture_output=True, env=env, check=False)
    if done.returncode != 0:
        raise AssertionError(f"uuidforge {' '.join(args)}: {done.stderr.decode()}")
    return done.stdout.decode()


PORT = os.environ.get("UUIDFORGE_TEST_PGPORT", "5432")
ADMIN = f"postgresql://uuidforge_admin:uuidforge@127.0.0.1:{PORT}"
LOGIN = f"postgresql://uuidforge:uuidforge@127.0.0.1:{PORT}"


@pytest.fixture()
def database(request):
    """A fresh database `uf_py_<test>_<pid>` owned by the login role, with
    the uuidforge extension; its URL (as the login role). Dropped after."""
    import psycopg

    name = f"uf_py_{request.node.name[:30]}_{os.getpid()}".lower()
    name = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    with psycopg.connect(f"{ADMIN}/postgres", autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        c.execute(f'CREATE DATABASE "{name}" OWNER uuidforge')
    with psycopg.connect(f"{ADMIN}/{name}", autocommit=True) as c:
        c.execute("CREATE EXTENSION uuidforge")
    yield f"{LOGIN}/{name}"
    with psycopg.connect(f"{ADMIN}/postgres", autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def is_std_uuid(value: object) -> bool:
    return type(value) is uuid.UUID


def pytest_sessionstart(session):
    """The tests run against the installed wheel, never the source tree."""
    import uuidforge

    where = pathlib.Path(uuidforge.__file__).resolve()
    if ROOT / "python" in where.parents:
        raise RuntimeError(f"uuidforge imported from the source tree ({where}), not the installed wheel")
