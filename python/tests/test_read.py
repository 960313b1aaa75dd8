"""Reading: every codec round-trips (hypothesis), bad input names the
position and character, times, bounds, partition keys, inspection,
UUID_192 and hiding."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidforge
from conftest import is_std_uuid, run_cli

UTC = dt.timezone.utc
any_uuid = st.builds(uuid.UUID, int=st.integers(min_value=0, max_value=(1 << 128) - 1))
v7_ms = st.integers(min_value=0, max_value=(1 << 48) - 1)

FORMS = ["canonical", "simple", "braced", "urn", "base32", "base32-check"]


@settings(max_examples=400, deadline=None)
@given(any_uuid, st.sampled_from(FORMS), st.booleans())
def test_every_text_form_round_trips(u, form, upper):
    text = uuidforge.format(u, form, upper=upper)
    back = uuidforge.parse(text)
    assert is_std_uuid(back) and back == u
    assert uuidforge.parse(text.encode()) == u
    if form == "canonical":
        assert text == (str(u).upper() if upper else str(u))
    if form == "braced":
        assert text.lower() == "{" + str(u) + "}"
    if form == "urn":
        assert text.lower() == u.urn


@settings(max_examples=400, deadline=None)
@given(any_uuid)
def test_base32_round_trips_and_sorts_like_the_value(u):
    text = uuidforge.to_base32(u)
    assert len(text) == 26 and uuidforge.from_base32(text) == u
    assert uuidforge.from_base32(text.lower()) == u
    checked = uuidforge.to_base32(u, check=True)
    assert len(checked) == 27 and checked[:26] == text
    assert uuidforge.from_base32(checked) == u


@settings(max_examples=200, deadline=None)
@given(any_uuid, any_uuid)
def test_base32_order_is_value_order(a, b):
    assert (uuidforge.to_base32(a) < uuidforge.to_base32(b)) == (a < b)


def test_base32_is_ulid_text_and_the_clis(cli):
    u = uuid.UUID("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
    assert uuidforge.to_base32(u) == "01FWHE4YDGFK1SHH6W1G60EECF"
    assert run_cli(cli, "convert", "--to", "base32", str(u)).strip() == "01FWHE4YDGFK1SHH6W1G60EECF"


@pytest.mark.parametrize(
    "text, position, character",
    [
        ("017f22e2-79b0-7cc3-98c4-dc0c0c07398g", 35, "g"),
        ("017f22e2x79b0-7cc3-98c4-dc0c0c07398f", 8, "x"),
        ("{017f22e2-79b0-7cc3-98c4-dc0c0c07398f]", 37, "]"),
        ("017f22e279b07cc398c4dc0c0c07398z", 31, "z"),
        ("01FWHE4YDGFK1SHH6W1G60EEC*", 25, "*"),
        ("81FWHE4YDGFK1SHH6W1G60EECF", 0, "8"),
    ],
)
def test_bad_text_names_position_and_character(text, position, character):
    with pytest.raises(uuidforge.ParseError) as e:
        uuidforge.parse(text)
    assert isinstance(e.value, ValueError)
    assert (e.value.position, e.value.character) == (position, character)
    assert e.value.text == text and e.value.expected
    assert f"position {position}" in str(e.value)


def test_bad_length_and_types():
    with pytest.raises(uuidforge.ParseError) as e:
        uuidforge.parse("017f22e2")
    assert e.value.position is None and "length 8" in str(e.value)
    with pytest.raises(uuidforge.ParseError):
        uuidforge.parse("é" * 36)
    with pytest.raises(uuidforge.ParseError):
        uuidforge.parse("x" * 1000)
    with pytest.raises(TypeError):
        uuidforge.parse(42)
    with pytest.raises(uuidforge.ParseError) as e:
        uuidforge.from_base32("01FWHE4YDGFK1SHH6W1G60EECF0")  # wrong check symbol
    assert "check symbol" in str(e.value)
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.format(uuid.UUID(int=1), "binary")
    assert e.value.field == "form"


DATETIME_END_MS = 253_402_300_800_000  # 10000-01-01


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=DATETIME_END_MS - 1))
def test_timestamp_of_a_v7_is_its_millisecond(ms):
    u = uuidforge.uuid7(at=ms)
    t = uuidforge.timestamp(u)
    assert t.tzinfo is not None
    assert (t - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(milliseconds=1) == ms


def test_a_time_datetime_cannot_hold():
    late = uuidforge.uuid7(at=DATETIME_END_MS)
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.timestamp(late)
    assert "10000" in e.value.expected
    r = uuidforge.inspect(uuidforge.parse("e677d21f-dc00-7000-8000-000000000000"))  # year 10000, read as such
    assert r.fields["unix_ts_ms"] == str(0xE677D21FDC00)
    beyond = [t for t in [r.timestamp, *(r.draft01 or {}).values()] if t.unix_nanos >= DATETIME_END_MS * 10**6]
    assert beyond and all(t.at is None for t in beyond)
    assert uuidforge.timestamp(uuidforge.uuid7(at=DATETIME_END_MS - 1)).year == 9999


def test_timestamp_of_other_versions():
    v1 = uuid.UUID("C232AB00-9414-11EC-B3C8-9F6BDECED846")  # RFC 9562 A.1
    assert uuidforge.timestamp(v1) == dt.datetime(2022, 2, 22, 19, 22, 22, tzinfo=UTC)
    v6 = uuid.UUID("1EC9414C-232A-6B00-B3C8-9F6BDECED846")  # A.5
    assert uuidforge.timestamp(v6) == dt.datetime(2022, 2, 22, 19, 22, 22, tzinfo=UTC)
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.timestamp(uuid.uuid4())
    assert "version 4" in e.value.expected


def lowest_v7(ms: int) -> uuid.UUID:
    return uuid.UUID(int=(ms << 80) | (7 << 76) | (2 << 62))


def highest_v7(ms: int) -> uuid.UUID:
    return uuid.UUID(int=(ms << 80) | (7 << 76) | (0xFFF << 64) | (2 << 62) | ((1 << 62) - 1))


@settings(max_examples=200, deadline=None)
@given(v7_ms, st.integers(min_value=0, max_value=10_000), st.integers(min_value=-5, max_value=15_000))
def test_bounds_hold_exactly_the_span(start, length, probe_offset):
    end = min(start + length, (1 << 48) - 1)
    lo, hi = uuidforge.bounds(start, end)
    probe = start + probe_offset
    if not 0 <= probe < (1 << 48):
        return
    for u in (uuidforge.uuid7(at=probe), lowest_v7(probe), highest_v7(probe)):
        inside = lo <= u and (hi is None or u < hi)
        assert inside == (start <= probe < end), (start, end, probe, u)


def test_bounds_take_datetimes_and_refuse_reversed_spans():
    a = dt.datetime(2024, 1, 1, tzinfo=UTC)
    b = dt.datetime(2024, 1, 2, tzinfo=UTC)
    lo, hi = uuidforge.bounds(a, b)
    assert uuidforge.timestamp(lo) == a and hi is not None
    with pytest.raises(uuidforge.FieldError):
        uuidforge.bounds(b, a)


@settings(max_examples=200, deadline=None)
@given(v7_ms, st.integers(min_value=1, max_value=48))
def test_partition_keys(ms, bits):
    u = uuidforge.uuid7(at=ms)
    key = uuidforge.partition_key(u, bits)
    assert key == uuidforge.partition_key(ms, bits) == u.int >> (128 - bits)
    lo, hi = uuidforge.partition_range(key, bits)
    assert lo <= u and (hi is None or u < hi)


def test_partition_key_errors():
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.partition_key(uuidforge.uuid7(), 49)
    assert e.value.field == "bits"


def test_inspect_reads_every_version(cli):
    v7 = uuidforge.uuid7_batch(5, profile="pg18")[-1]
    r = uuidforge.inspect(v7)
    assert isinstance(r, uuidforge.Inspection)
    assert (r.version, r.variant) == (7, "rfc9562")
    assert r.timestamp is not None and r.timestamp.precision == "ms"
    assert r.layout_guess is not None and r.layout_guess.ranking
    assert set(r.draft01) == {"ms", "us", "ns"}
    assert r.uuid == v7 and "unix_ts_ms" in r.fields
    r1 = uuidforge.inspect("C232AB00-9414-11EC-B3C8-9F6BDECED846")
    assert r1.version == 1 and r1.timestamp.iso8601 == "2022-02-22T19:22:22.0000000Z"
    assert uuidforge.inspect(uuid.UUID(int=0)).special == "nil"
    import json

    cli_json = json.loads(run_cli(cli, "inspect", "--json", str(v7)))
    for field in ["version", "variant", "timestamp", "fields", "draft01"]:
        assert cli_json[field] == r.raw[field]


@settings(max_examples=200, deadline=None)
@given(
    any_uuid,
    st.integers(0, 255),
    st.integers(0, 4095),
    st.integers(0, 63),
    st.sampled_from(["none", "insert", "update", "delete", "merge", "read", "archive", "restore"]),
    st.integers(0, 63),
    st.integers(0, 127),
    st.booleans(),
    st.booleans(),
)
def test_uuid192_round_trips(u, module, table, source, operation, message, shard, archived, deleted):
    k = uuidforge.UUID192(
        u, module=module, table=table, source=source, operation=operation,
        message=message, shard=shard, archived=archived, deleted=deleted,
    )
    assert k.uuid == u and is_std_uuid(k.uuid)
    assert uuidforge.UUID192.parse(str(k)) == k
    assert uuidforge.UUID192.parse(k.base32) == k
    assert uuidforge.UUID192.from_bytes(bytes(k)) == k
    f = k.fields
    assert (f["module"], f["table"], f["operation"], f["archived"]) == (module, table, operation, archived)
    assert str(k)[:36] == str(u)


def test_uuid192_checks():
    u = uuid.UUID("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")
    k = uuidforge.UUID192(u, module=3, table=42)
    raw = uuidforge.UUID192(u, payload=12345)
    assert raw.fields == {"structure": "raw", "payload": 12345}
    assert k < uuidforge.UUID192(uuid.UUID(int=u.int + 1))
    spliced = str(k)[:35] + ("0" if str(k)[35] != "0" else "1") + str(k)[36:]
    with pytest.raises(uuidforge.ParseError) as e:
        uuidforge.UUID192.parse(spliced)
    assert "checksum" in str(e.value)
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.UUID192(u, table=5000)
    assert e.value.field == "table"
    assert len({k, uuidforge.UUID192.parse(str(k))}) == 1


@settings(max_examples=200, deadline=None)
@given(v7_ms)
def test_hide_and_reveal_round_trip(ms):
    hider = uuidforge.Hider(bytes(range(32)))
    u = uuidforge.uuid7(at=ms)
    outside = hider.hide(u)
    assert outside.version == 4 and hider.reveal(outside) == u


def test_hider_key_file_is_the_clis(cli, tmp_path):
    key = tmp_path / "app.key"
    run_cli(cli, "hide", "--new-key", str(key))
    u = uuidforge.uuid7()
    hider = uuidforge.Hider.from_key_file(key)
    assert str(hider.hide(u)) == run_cli(cli, "hide", "--key-file", str(key), str(u)).strip()
    assert "key" in repr(hider) and key.read_bytes().hex() not in repr(hider)
    short = tmp_path / "short.key"
    short.write_bytes(b"0123456789abcdef0123456789abcdef\n")
    with pytest.raises(uuidforge.FieldError) as e:
        uuidforge.Hider.from_key_file(short)
    assert "33 bytes" in e.value.value and "exactly 32" in e.value.expected
    with pytest.raises(uuidforge.FieldError):
        uuidforge.Hider(b"short")
    with pytest.raises(uuidforge.FieldError):
        hider.hide(uuid.uuid4())  # only a v7 hides


def test_subclasses_and_odd_objects():
    class Sub(uuid.UUID):
        pass

    s = Sub(int=(1 << 127) + 5)
    assert uuidforge.to_base32(s) == uuidforge.to_base32(uuid.UUID(int=(1 << 127) + 5))
    assert uuidforge.format(uuid.UUID(int=0)) == "00000000-0000-0000-0000-000000000000"
    assert uuidforge.format(uuid.UUID(int=(1 << 128) - 1), "simple") == "f" * 32
    with pytest.raises(TypeError):
        uuidforge.to_base32(12)
    with pytest.raises((AttributeError, TypeError)):
        uuidforge.to_base32(uuid.UUID.__new__(uuid.UUID))  # no value set
