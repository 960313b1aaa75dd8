"""Generation: the standard type, order across threads, forks and
processes, backfills, keyed values, the other versions, generators."""

from __future__ import annotations

import copy
import datetime as dt
import multiprocessing
import os
import pickle
import struct
import threading
import uuid

import pytest

import uuidforge
from conftest import is_std_uuid, run_cli

UTC = dt.timezone.utc


def test_uuid7_is_exactly_the_standard_uuid():
    u = uuidforge.uuid7()
    assert is_std_uuid(u)
    assert u.version == 7 and u.variant == uuid.RFC_4122
    assert u.is_safe is uuid.SafeUUID.unknown
    same = uuid.UUID(str(u))
    assert u == same and hash(u) == hash(same) and repr(u) == repr(same)
    assert pickle.loads(pickle.dumps(u)) == u
    assert copy.copy(u) == u and copy.deepcopy(u) == u
    assert u.bytes == same.bytes and u.fields == same.fields
    with pytest.raises(TypeError):
        u.int = 5  # as immutable as the standard one


@pytest.mark.parametrize("through_descriptors", [False, True])
def test_both_ways_of_making_a_value_agree_with_the_constructor(through_descriptors):
    uuidforge._native._through_descriptors(through_descriptors)
    try:
        expected = "descriptors" if through_descriptors else ("slots", "descriptors")
        assert uuidforge._native._construction() in expected
        for text in [
            "00000000-0000-0000-0000-000000000000",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
            "00000000-0000-0000-ffff-ffffffffffff",
            "00000000-0000-0001-0000-000000000000",
        ]:
            made = uuidforge.parse(text)
            standard = uuid.UUID(text)
            assert type(made) is uuid.UUID
            assert made.int == standard.int and type(made.int) is int
            assert made.is_safe is standard.is_safe
            assert (str(made), repr(made), hash(made)) == (str(standard), repr(standard), hash(standard))
            assert pickle.loads(pickle.dumps(made)) == standard
    finally:
        uuidforge._native._through_descriptors(False)


def test_uuid7_carries_the_current_millisecond():
    before = dt.datetime.now(UTC)
    u = uuidforge.uuid7()
    after = dt.datetime.now(UTC)
    t = uuidforge.timestamp(u)
    # The clock of the generator may read up to a millisecond late.
    assert before - dt.timedelta(milliseconds=2) <= t <= after + dt.timedelta(milliseconds=1)


def test_order_across_eight_threads():
    per_thread = 40_000
    start = threading.Barrier(8)
    results: list[list[uuid.UUID]] = [[] for _ in range(8)]

    def work(i: int) -> None:
        start.wait()
        out = results[i]
        for _ in range(per_thread):
            out.append(uuidforge.uuid7())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for values in results:
        assert all(a < b for a, b in zip(values, values[1:]))
    everything = [v for values in results for v in values]
    assert len(set(everything)) == 8 * per_thread


def test_hand_out_order_under_a_lock_across_threads():
    # Each value is taken and recorded under one lock: the record is the
    # order values were handed out, which must be increasing whichever
    # thread took each (per-thread generators fail this within a
    # millisecond).
    lock = threading.Lock()
    record: list[uuid.UUID] = []
    start = threading.Barrier(8)

    def work() -> None:
        start.wait()
        for i in range(20_000):
            if i % 2:
                with lock:
                    record.append(uuidforge.uuid7())
            else:
                with lock:
                    record.extend(uuidforge.uuid7_batch(3))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(record) == 8 * 20_000 * 2
    assert all(a < b for a, b in zip(record, record[1:]))


def _child_values(count: int, write_fd: int) -> None:
    values = [uuidforge.uuid7() for _ in range(count)]
    with os.fdopen(write_fd, "wb") as w:
        w.write(b"".join(v.bytes for v in values))


def _read_values(data: bytes) -> list[bytes]:
    return [data[i : i + 16] for i in range(0, len(data), 16)]


def test_forked_children_never_share_a_value_or_a_random_stream():
    # The parent has generated (its random source seeded, its last value
    # set) before it forks; the children call nothing but uuid7().
    parent = [uuidforge.uuid7() for _ in range(1000)]
    count = 100_000
    readers = []
    pids = []
    for _ in range(8):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(r)
            try:
                _child_values(count, w)
            finally:
                os._exit(0)
        os.close(w)
        readers.append(r)
        pids.append(pid)
    after = [uuidforge.uuid7() for _ in range(count)]
    children = []
    for r in readers:
        with os.fdopen(r, "rb") as f:
            children.append(_read_values(f.read()))
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    assert all(len(c) == count for c in children)
    every = [v.bytes for v in parent + after] + [v for c in children for v in c]
    assert len(set(every)) == len(every) == 1000 + 9 * count
    # The random tails (last 7 bytes of the default layout) of the first
    # values differ: each child drew from its own stream.
    firsts = [c[0][9:] for c in children] + [after[0].bytes[9:]]
    assert len(set(firsts)) == len(firsts)
    for c in children:
        assert all(a < b for a, b in zip(c, c[1:]))


def _pool_batch(n: int) -> bytes:
    return b"".join(v.bytes for v in uuidforge.uuid7_batch(n))


def test_multiprocessing_fork_workers_share_no_value():
    uuidforge.uuid7_batch(100)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        chunks = pool.map(_pool_batch, [20_000] * 8)
    values = [v for c in chunks for v in _read_values(c)]
    assert len(set(values)) == len(values) == 160_000


def test_uuid7_batch_is_increasing_and_follows_uuid7():
    a = uuidforge.uuid7()
    batch = uuidforge.uuid7_batch(10_000)
    b = uuidforge.uuid7()
    assert len(batch) == 10_000 and all(is_std_uuid(v) for v in batch[:10])
    assert all(x < y for x, y in zip(batch, batch[1:]))
    assert a < batch[0] and batch[-1] < b
    assert uuidforge.uuid7_batch(0) == []


def test_profiles_share_the_process_order():
    values = []
    for profile in ["pg18", "default", "counter42", "random", "pg18"]:
        values.extend(uuidforge.uuid7_batch(50, profile=profile))
        values.append(uuidforge.Generator(profile)())
    assert all(a < b for a, b in zip(values, values[1:]))


def test_backfill_at_a_time():
    at = dt.datetime(2020, 2, 29, 12, 0, 0, 123456, tzinfo=UTC)
    u = uuidforge.uuid7(at=at)
    assert u.version == 7
    assert uuidforge.timestamp(u) == at.replace(microsecond=123000)
    assert uuidforge.uuid7(at=1_582_977_600_123) != u  # fresh random bits
    batch = uuidforge.uuid7_batch(1000, at=at)
    assert all(uuidforge.timestamp(v) == at.replace(microsecond=123000) for v in batch[:5])
    assert all(a < b for a, b in zip(batch, batch[1:]))
    # A naive datetime has no one instant.
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.uuid7(at=dt.datetime(2020, 1, 1))
    assert e.value.field == "at" and "aware" in e.value.expected
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.uuid7(at=-1)
    assert e.value.field == "at"
    with pytest.raises(uuidforge.FieldError):
        uuidforge.uuid7(at="2020-01-01")
    with pytest.raises(uuidforge.FieldError):
        uuidforge.uuid7(at=True)


def test_uuid7_from_is_the_command_lines(cli, tmp_path):
    at = 1_645_557_742_000
    for key in ["orders:42", "", "ключ", "a\tb"]:
        expected = run_cli(cli, "gen", "--at", str(at), "--key", key).strip()
        assert str(uuidforge.uuid7_from(at, key)) == expected
        assert uuidforge.uuid7_from(at, key.encode()) == uuidforge.uuid7_from(at, key)
    assert str(uuidforge.uuid7_from(at, "orders:42")) == "017f22e2-79b0-7496-923e-225cc233cada"
    as_time = dt.datetime.fromtimestamp(at / 1000, UTC)
    assert uuidforge.uuid7_from(as_time, "k") == uuidforge.uuid7_from(at, "k")
    secret = tmp_path / "secret"
    secret.write_bytes(b"0123456789abcdef0123456789abcdef")
    expected = run_cli(cli, "gen", "--at", str(at), "--key", "k", "--secret-file", str(secret)).strip()
    assert str(uuidforge.uuid7_from(at, "k", secret=secret.read_bytes())) == expected
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.uuid7_from(at, "k", secret=b"short")
    assert e.value.field == "secret" and e.value.value == "5 bytes"
    with pytest.raises(TypeError):
        uuidforge.uuid7_from(at, 3.5)


def test_other_versions():
    assert uuidforge.uuid4().version == 4
    v1 = uuidforge.uuid1()
    assert v1.version == 1 and v1.node & (1 << 40)  # a random node: multicast bit
    a, b = uuidforge.uuid6(), uuidforge.uuid6()
    assert a.version == 6 and a < b
    for ns_name, ns in [("dns", uuid.NAMESPACE_DNS), ("url", uuid.NAMESPACE_URL)]:
        assert uuidforge.uuid5(ns_name, "example.com") == uuid.uuid5(ns, "example.com")
        assert uuidforge.uuid3(ns, "example.com") == uuid.uuid3(ns, "example.com")
        assert uuidforge.uuid5(ns, "é".encode()) == uuid.uuid5(ns, "é")
    # RFC 9562 Appendix B.2.
    assert str(uuidforge.uuid8(namespace="dns", name="www.example.com")) == "5c146b14-3c52-8afd-938a-375d0df1fbf6"
    c = uuidforge.uuid8(custom=bytes(range(16)))
    assert c.version == 8 and c.variant == uuid.RFC_4122
    assert uuidforge.uuid8().version == 8
    with pytest.raises(uuidforge.FieldError):
        uuidforge.uuid8(custom=b"short")
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.uuid5("nope", "x")
    assert e.value.field == "namespace"
    v4s = {uuidforge.uuid4() for _ in range(10_000)}
    assert len(v4s) == 10_000


def test_generator_settings_and_telemetry():
    g = uuidforge.Generator(counter_bits=30, overflow="error")
    assert g.settings["counter_bits"] == 30 and g.settings["overflow"] == "error"
    values = g.batch(1000) + [g() for _ in range(10)]
    assert all(a < b for a, b in zip(values, values[1:]))
    assert "counter" in g.diagram
    t = g.telemetry()
    assert set(t) == {"overflows", "rollbacks", "resets", "reseeds", "clock_failures", "ahead_ms", "max_ahead_ms"}
    assert "its own order" in repr(g)
    assert "process-wide" in repr(uuidforge.Generator("pg18"))
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.Generator(counter_bits=99)
    assert e.value.field == "counter_bits"
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.Generator("nope")
    assert e.value.field == "profile" and "pg18" in e.value.expected
    with pytest.raises(uuidforge.FieldError):
        uuidforge.Generator(no_such_setting=1)


def test_overflow_policy_error_raises_generator_error():
    # A 1-bit counter (guard bit included: no room at all) overflows at the
    # second value within a millisecond under overflow="error".
    g = uuidforge.Generator(counter_bits=1, guard_bits=1, overflow="error", clock="system")
    with pytest.raises(uuidforge.GeneratorError):
        for _ in range(100_000):
            g()
    assert g.telemetry()["overflows"] >= 1


def test_threads_share_a_generator_object():
    g = uuidforge.Generator("counter42")
    out: list[list[uuid.UUID]] = [[] for _ in range(4)]

    def work(i: int) -> None:
        out[i].extend(g.batch(20_000))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [v for o in out for v in o]
    assert len(set(every)) == 80_000
    for o in out:
        assert all(a < b for a, b in zip(o, o[1:]))


def test_struct_of_bytes_is_big_endian_int():
    u = uuidforge.uuid7()
    hi, lo = struct.unpack(">QQ", u.bytes)
    assert (hi << 64) | lo == u.int
