"""Host-wide order: Python processes and `uuidforge gen --host-wide`
handing out values through one cell, in one strictly increasing order."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

import uuidforge
from conftest import run_cli

WORKER = r"""
import fcntl, sys, uuidforge
cell, lock, log, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with open(lock, "w") as lk:
    for i in range(n):
        fcntl.flock(lk, fcntl.LOCK_EX)
        try:
            if i % 3 == 2:
                values = uuidforge.uuid7_batch(2, host_wide=cell)
            else:
                values = [uuidforge.uuid7(host_wide=cell)]
            with open(log, "a") as f:
                f.write("".join(f"{v}\n" for v in values))
        finally:
            fcntl.flock(lk, fcntl.LOCK_UN)
"""


def test_python_processes_and_the_cli_in_one_order(cli, tmp_path):
    cell = tmp_path / "order.cell"
    lock = tmp_path / "lock"
    log = tmp_path / "log"
    lock.touch()
    log.touch()
    per_worker = 400
    # Every value is taken and written under one lock, so the log is the
    # order values were handed out in, whichever process took them.
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(cell), str(lock), str(log), str(per_worker)])
        for _ in range(4)
    ]
    shell = (
        f'for i in $(seq 60); do flock "{lock}" sh -c \'exec "$0" gen --host-wide "$1" -n 2 >> "$2"\' '
        f'"{cli}" "{cell}" "{log}" || exit 1; done'
    )
    env = dict(os.environ, XDG_CONFIG_HOME="/nonexistent-uuidforge-test")
    clis = [subprocess.Popen(["sh", "-c", shell], env=env) for _ in range(2)]
    for p in workers + clis:
        assert p.wait(timeout=300) == 0
    values = [uuid.UUID(line) for line in log.read_text().split()]
    python_count = 4 * (per_worker + per_worker // 3 + (1 if per_worker % 3 == 2 else 0))
    assert len(values) == python_count + 2 * 60 * 2
    assert all(a < b for a, b in zip(values, values[1:]))
    # A value from the process-wide generator of this process comes after
    # none of them necessarily; one through the cell comes after all.
    assert uuidforge.uuid7(host_wide=str(cell)) > values[-1]
    assert os.stat(cell).st_mode & 0o777 == 0o600


def test_a_generator_object_and_a_forked_child_keep_the_host_order(tmp_path):
    cell = str(tmp_path / "gen.cell")
    g = uuidforge.Generator(host_wide=cell)
    first = g()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            with os.fdopen(w, "w") as f:
                f.write(str(uuidforge.uuid7(host_wide=cell)))
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        child = uuid.UUID(f.read())
    os.waitpid(pid, 0)
    last = g()
    assert first < child < last
    assert "host-wide" in repr(g)


def test_a_cell_anyone_may_write_is_refused(cli, tmp_path):
    bad = tmp_path / "open.cell"
    run_cli(cli, "gen", "--host-wide", str(bad))
    os.chmod(bad, 0o666)
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.uuid7(host_wide=str(bad))
    assert e.value.field == "host_wide" and "write" in e.value.expected
    junk = tmp_path / "junk.cell"
    junk.write_bytes(b"not a cell")
    os.chmod(junk, 0o600)
    with pytest.raises(uuidforge.FieldError):
        uuidforge.uuid7(host_wide=str(junk))
    with pytest.raises(uuidforge.FieldError):
        uuidforge.uuid7(at=0, host_wide=True)
