#!/usr/bin/env python3
"""Writes conformance/vectors.json from an implementation independent of the
Rust code: Python's uuid, hashlib and plain integer arithmetic.

Run: python3 conformance/generate.py > conformance/vectors.json
The RFC 9562 appendix vectors are copied from the RFC and asserted here too,
so a mistake in this script shows up before the file is written.
"""
import datetime
import hashlib
import json
import uuid

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CHECK = ALPHABET + "*~$=U"
DNS = uuid.NAMESPACE_DNS


def b32(value, chars):
    return "".join(ALPHABET[(value >> (5 * (chars - 1 - i))) & 31] for i in range(chars))


def canonical(i):
    return str(uuid.UUID(int=i))


def iso(unix_ns, digits):
    secs, nanos = divmod(unix_ns, 10**9)
    d = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=secs)
    s = d.strftime("%Y-%m-%dT%H:%M:%S")
    return s + ("." + f"{nanos:09d}"[:digits] if digits else "") + "Z"


def with_version(v, version):
    v &= ~(0xF << 76)
    v |= version << 76
    v &= ~(0x3 << 62)
    v |= 0x2 << 62
    return v


def crc16_ccitt_false(data):
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


vectors = []


def add(kind, vid, source, **kw):
    vectors.append({"id": vid, "kind": kind, "source": source, **kw})


# --- RFC 9562 appendix vectors -------------------------------------------
RFC_TIME = "2022-02-22T19:22:22"
rfc = [
    ("rfc9562-a1-v1", "A.1", "C232AB00-9414-11EC-B3C8-9F6BDECED846", 1, RFC_TIME + ".0000000Z",
     {"gregorian_ticks": "0x1ec9414c232ab00", "clock_seq": "0x33c8", "node": "0x9f6bdeced846"}),
    ("rfc9562-a2-v3", "A.2", "5df41881-3aed-3515-88a7-2f4a814cf09e", 3, None, {}),
    ("rfc9562-a3-v4", "A.3", "919108f7-52d1-4320-9bac-f847db4148a8", 4, None, {}),
    ("rfc9562-a4-v5", "A.4", "2ed6657d-e927-568b-95e1-2665a8aea6a2", 5, None, {}),
    ("rfc9562-a5-v6", "A.5", "1EC9414C-232A-6B00-B3C8-9F6BDECED846", 6, RFC_TIME + ".0000000Z",
     {"gregorian_ticks": "0x1ec9414c232ab00", "clock_seq": "0x33c8", "node": "0x9f6bdeced846"}),
    ("rfc9562-a6-v7", "A.6", "017F22E2-79B0-7CC3-98C4-DC0C0C07398F", 7, RFC_TIME + ".000Z",
     {"unix_ts_ms": "1645557742000", "rand_a": "0xcc3", "rand_b": "0x18c4dc0c0c07398f"}),
    ("rfc9562-b1-v8", "B.1", "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0", 8, None,
     {"custom_a": "0x2489e9ad2ee2", "custom_b": "0xe00", "custom_c": "0x0ec932d5f69181c0"}),
    ("rfc9562-b2-v8", "B.2", "5c146b14-3c52-8afd-938a-375d0df1fbf6", 8, None, {}),
    ("rfc9562-s4-sample", "§4", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", 1, None, {}),
]
for vid, section, text, version, ts, fields in rfc:
    u = uuid.UUID(text)
    assert u.version == version and u.variant == uuid.RFC_4122
    expect = {"canonical": str(u), "version": version, "variant": "rfc9562", "fields": fields}
    if ts:
        expect["timestamp"] = ts
    add("decode", vid, "RFC 9562 " + section, input=text, expect=expect)
assert uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6").int == 329800735698586629295641978511506172918
assert uuid.uuid3(DNS, "www.example.com") == uuid.UUID("5df41881-3aed-3515-88a7-2f4a814cf09e")
assert uuid.uuid5(DNS, "www.example.com") == uuid.UUID("2ed6657d-e927-568b-95e1-2665a8aea6a2")

add("decode", "rfc9562-nil", "RFC 9562 §5.9", input="00000000-0000-0000-0000-000000000000",
    expect={"canonical": "00000000-0000-0000-0000-000000000000", "version": 0, "variant": "ncs", "special": "nil", "fields": {}})
add("decode", "rfc9562-max", "RFC 9562 §5.10", input="FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
    expect={"canonical": "ffffffff-ffff-ffff-ffff-ffffffffffff", "version": 15, "variant": "future", "special": "max", "fields": {}})
for n in "89ab":
    text = f"00000000-0000-4000-{n}000-000000000000"
    add("decode", f"rfc9562-variant-{n}", "RFC 9562 §4.1", input=text,
        expect={"canonical": text, "version": 4, "variant": "rfc9562", "fields": {}})

for version, fn in [(3, uuid.uuid3), (5, uuid.uuid5)]:
    add("name-based", f"rfc9562-v{version}-dns", "RFC 9562 A.%d" % (2 if version == 3 else 4),
        version=version, namespace=str(DNS), name="www.example.com", expect={"canonical": str(fn(DNS, "www.example.com"))})
digest = hashlib.sha256(DNS.bytes + b"www.example.com").digest()
sha256_id = with_version(int.from_bytes(digest[:16], "big"), 8)
assert canonical(sha256_id) == "5c146b14-3c52-8afd-938a-375d0df1fbf6"
add("name-based", "rfc9562-v8-sha256-dns", "RFC 9562 B.2", version=8, namespace=str(DNS), name="www.example.com",
    expect={"canonical": canonical(sha256_id)})
for name in ["", "uuidforge", "ü"]:
    d = hashlib.sha256(uuid.NAMESPACE_URL.bytes + name.encode()).digest()
    add("name-based", f"v8-sha256-url-{len(name)}", "RFC 9562 B.2 construction", version=8,
        namespace=str(uuid.NAMESPACE_URL), name=name, expect={"canonical": canonical(with_version(int.from_bytes(d[:16], "big"), 8))})

# v1 <-> v6 (draft Table 3)
for ticks, seq, node in [(0x1EC9414C232AB00, 0x33C8, 0x9F6BDECED846), (0, 0, 0), ((1 << 60) - 1, (1 << 14) - 1, (1 << 48) - 1),
                         (0x0123456789ABCDE, 0x1234, 0x010203040506)]:
    v1 = uuid.UUID(fields=(ticks & 0xFFFFFFFF, (ticks >> 32) & 0xFFFF, (ticks >> 48) | 0x1000, 0x80 | (seq >> 8), seq & 0xFF, node))
    v6 = with_version(((ticks >> 12) << 80) | ((ticks & 0xFFF) << 64) | (seq << 48) | node, 6)
    add("v1-v6", f"v1-v6-{ticks:x}", "draft Table 3", v1=str(v1), v6=canonical(v6),
        expect={"timestamp": iso(ticks * 100 - 0x01B21DD213814000 * 100, 7) if ticks >= 0x01B21DD213814000 else None})

# --- encodings --------------------------------------------------------------
samples = [0, (1 << 128) - 1, 0x017F22E279B07CC398C4DC0C0C07398F, 0x0123456789ABCDEF0123456789ABCDEF,
           0x919108F752D143209BACF847DB4148A8, 36, 37 * 1000 + 35, 1 << 127, (1 << 125) - 1]
for i, v in enumerate(samples):
    c = canonical(v)
    add("encodings", f"encodings-{i}", "RFC 9562 §4, Crockford Base32", input=c, expect={
        "canonical": c, "simple": c.replace("-", ""), "braced": "{" + c + "}", "urn": "urn:uuid:" + c,
        "base32": b32(v, 26), "base32-check": b32(v, 26) + CHECK[v % 37]})
# accepted spellings of one value
for text in ["017F22E2-79B0-7CC3-98C4-DC0C0C07398F", "017f22e279b07cc398c4dc0c0c07398f", "{017f22e2-79b0-7CC3-98c4-dc0c0c07398f}",
             "URN:UUID:017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "01fwhe4ydgfk1shh6w1g6oeecf", "0lFWHE4YDGFKiSHH6W1G60EECF"]:
    add("parse", "parse-" + text[:12].lower().replace(":", "").replace("{", "b"), "aliases and case", input=text,
        expect={"canonical": "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"})
errors = [
    ("017f22e2-79b0-7cc3-98c4-dc0c0c07398g", 35, "g"), ("017f22e2_79b0-7cc3-98c4-dc0c0c07398f", 8, "_"),
    ("017f22e279b07cc398c4dc0c0c07398z", 31, "z"), ("{017f22e2-79b0-7cc3-98c4-dc0c0c07398f]", 37, "]"),
    ("urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398q", 44, "q"), ("urn:uuix:017f22e2-79b0-7cc3-98c4-dc0c0c07398f", 7, "x"),
    ("01FWHE4YDGFK1SHH6W1G60EECU", 25, "U"), ("81FWHE4YDGFK1SHH6W1G60EECF", 0, "8"), ("01FWHE4YDGFK1SHH6W1G60EEC!", 25, "!"),
    ("017f22e2-79b0-7cc3", None, None), ("", None, None),
]
for text, pos, found in errors:
    add("parse-error", f"parse-error-{len(vectors)}", "typed parse errors", input=text, expect={"position": pos, "found": found})
v = 0x017F22E279B07CC398C4DC0C0C07398F
wrong = CHECK[(v % 37 + 1) % 37]
add("parse-error", "base32-check-mismatch", "Crockford check symbol", input=b32(v, 26) + wrong,
    expect={"position": None, "found": None, "check_expected": CHECK[v % 37]})

# --- v7: Method 3 and the counter-position pitfall --------------------------
add("method3", "rfc9562-method3-example", "RFC 9562 §6.2 Method 3", nanos_in_ms=456700, bits=12, expect={"fraction": 0x74E})
for ns in [0, 1, 244, 245, 500000, 999999]:
    add("method3", f"method3-{ns}", "RFC 9562 §6.2 Method 3", nanos_in_ms=ns, bits=12, expect={"fraction": ns * 4096 // 1_000_000})
MS = 1_700_000_000_000
for counter, prefix in [(0x3FFFFFF, "018bcfe5-6800-7000-83ff-ffff"), (0x4000000, "018bcfe5-6800-7000-8400-0000"),
                        (0x40000000, "018bcfe5-6800-7001-8000-0000"), (0x3FFFFFFFFFF, "018bcfe5-6800-7fff-bfff-ffff")]:
    rand32 = 0x89ABCDEF
    val = with_version((MS << 80) | ((counter >> 30) << 64) | ((counter & 0x3FFFFFFF) << 32) | rand32, 7)
    assert canonical(val).startswith(prefix), (canonical(val), prefix)
    add("counter42", f"pitfall1-counter-{counter:x}", "rfc9562.md §3 pitfall 1 (uuid-rs#869)", unix_ms=MS, counter=counter,
        random32=rand32, expect={"canonical": canonical(val), "prefix": prefix})

# --- draft-01 UUIDv7 -------------------------------------------------------
WIDTHS = {"ms": (12, 12, 62, 10**3), "us": (24, 14, 48, 10**6), "ns": (38, 8, 40, 10**9)}
cases = [(1_645_557_742, 123_456_789, 7, 1), (0, 0, 0, 0), ((1 << 36) - 1, 999_999_999, 5, 3), (1_600_000_000, 500_000_000, 1, 0xABCDEF)]
for secs, nanos, seq, rnd in cases:
    for name, (fb, sb, rb, units) in WIDTHS.items():
        seq_ = seq & ((1 << sb) - 1)
        rnd_ = rnd & ((1 << rb) - 1)
        u = nanos // (10**9 // units)
        frac = -(-(u << fb) // units)  # ceil
        payload = (frac << (sb + rb)) | (seq_ << rb) | rnd_
        val = with_version((secs << 92) | ((payload >> 74) << 80) | (((payload >> 62) & 0xFFF) << 64) | (payload & ((1 << 62) - 1)), 7)
        p = ((val >> 80) & 0xFFF) << 74 | ((val >> 64) & 0xFFF) << 62 | (val & ((1 << 62) - 1))
        read = {}
        for rname, (_, _, _, runits) in WIDTHS.items():
            r = (p * runits) >> 86
            read[rname] = iso(secs * 10**9 + r * (10**9 // runits), {"ms": 3, "us": 6, "ns": 9}[rname])
        add("draft01", f"draft01-{name}-{secs}-{nanos}", "draft-01 §4.4 Figures 3-5", layout=name, unix_seconds=secs,
            subsec_nanos=nanos, seq=seq_, random=rnd_, expect={"canonical": canonical(val), **read})

# --- v8 draft time layouts (draft §4.5) -------------------------------------
for layout, ts_bits, seq_bits, node_bits in [("ts32", 32, 12, 62), ("ts48", 48, 12, 62), ("ts60", 60, 8, 54), ("ts64", 64, 8, 54)]:
    for ts, seq, node in [(0x0123456789ABCDEF, 5, 0x2A), ((1 << 64) - 1, (1 << 16) - 1, (1 << 64) - 1)]:
        ts &= (1 << ts_bits) - 1
        seq &= (1 << seq_bits) - 1
        node &= (1 << node_bits) - 1
        ts60 = {"ts32": ts << 28, "ts48": ts << 12, "ts60": ts, "ts64": ts >> 4}[layout]
        if seq_bits == 12:
            val = ((ts60 >> 12) << 80) | (seq << 64) | node
        else:
            val = ((ts60 >> 12) << 80) | ((ts60 & 0xFFF) << 64) | (seq << 54) | node
        decoded_ts = ts & ~0xF if layout == "ts64" else ts
        add("v8-draft", f"v8-{layout}-{seq}", "draft-01 §4.5", layout=layout, timestamp=ts, seq=seq, node=node,
            expect={"canonical": canonical(with_version(val, 8)), "timestamp": decoded_ts})
add("v8-b1", "rfc9562-b1-encode", "RFC 9562 B.1", ticks_10ns=0x2489E9AD2EE2E00, custom_c=0xEC932D5F69181C0,
    expect={"canonical": "2489e9ad-2ee2-8e00-8ec9-32d5f69181c0", "timestamp": RFC_TIME + ".00000000Z"})

# --- UUID_192 ------------------------------------------------------------
def segment_general(module, table, source, op, message, shard, archived, deleted):
    return (1 << 44) | module << 36 | table << 24 | source << 18 | op << 15 | message << 9 | shard << 2 | archived << 1 | deleted


OPS = ["none", "insert", "update", "delete", "merge", "read", "archive", "restore"]
for i, (u, fields) in enumerate([
    (0x017F22E279B07CC398C4DC0C0C07398F, {"structure": "general", "module": 3, "table": 42, "source": 1, "operation": "insert",
                                          "message": 0, "shard": 5, "archived": False, "deleted": False}),
    (0, {"structure": "raw", "payload": 0}),
    ((1 << 128) - 1, {"structure": "raw", "payload": (1 << 44) - 1}),
    (0x0123456789ABCDEF0123456789ABCDEF, {"structure": "general", "module": 255, "table": 4095, "source": 63, "operation": "restore",
                                          "message": 63, "shard": 127, "archived": True, "deleted": True}),
]):
    if fields["structure"] == "raw":
        head = fields["payload"]
    else:
        head = segment_general(fields["module"], fields["table"], fields["source"], OPS.index(fields["operation"]),
                               fields["message"], fields["shard"], int(fields["archived"]), int(fields["deleted"]))
    crc = crc16_ccitt_false(u.to_bytes(16, "big") + head.to_bytes(6, "big"))
    seg = (head << 16) | crc
    whole = (u << 64) | seg
    add("uuid192", f"uuid192-{i}", "uuidforge UUID_192 (docs/UUID192.md)", uuid=canonical(u), fields=fields,
        expect={"text": f"{canonical(u)}-{seg:016x}", "base32": b32(whole, 39), "bytes": f"{whole:048x}", "checksum": f"{crc:04x}"})
assert crc16_ccitt_false(b"123456789") == 0x29B1
add("uuid192-error", "uuid192-bad-checksum", "checksum", input="017f22e2-79b0-7cc3-98c4-dc0c0c07398f-1000000000000000",
    expect={"error": "checksum"})
add("uuid192-error", "uuid192-unknown-structure", "structure code", input="00000000-0000-0000-0000-000000000000-f000000000000000",
    expect={"error": "structure"})

# --- boundaries and partitions ---------------------------------------------
for ms in [0, 1645557742000, (1 << 48) - 1]:
    add("bounds", f"bounds-{ms}", "RFC 9562 §6.11, boundaries", unix_ms=ms,
        expect={"lowest": canonical(with_version(ms << 80, 7)), "highest": canonical(with_version((ms << 80) | ((1 << 80) - 1), 7))})
for bits in [16, 17, 20]:
    ms = 1645557742000
    key = ms >> (48 - bits)
    end = (key + 1) << (128 - bits)
    add("partition", f"partition-{bits}", "article feature 9: left bits of a v7", unix_ms=ms, bits=bits,
        expect={"key": key, "span_ms": 1 << (48 - bits), "start": canonical(key << (128 - bits)),
                "end": canonical(end) if end < (1 << 128) else None})

# --- sort-order adapters ----------------------------------------------------
ORDER = [10, 11, 12, 13, 14, 15, 8, 9, 6, 7, 4, 5, 0, 1, 2, 3]
for u in [0x017F22E279B07CC398C4DC0C0C07398F, 0x00112233445566778899AABBCCDDEEFF]:
    b = u.to_bytes(16, "big")
    guid = [0] * 16
    for i, pos in enumerate(ORDER):
        guid[pos] = b[i]
    shown = uuid.UUID(bytes_le=bytes(guid))
    dotnet = uuid.UUID(int=u).bytes_le
    mysql_handed = b[4:8] + b[2:4] + b[0:2] + b[8:]  # its UUID_TO_BIN(x, 1) is b
    assert mysql_handed[6:8] + mysql_handed[4:6] + mysql_handed[0:4] + mysql_handed[8:] == b
    add("sortorder", f"sortorder-{u:x}"[:24], "SqlGuid, Guid.ToByteArray, UUID_TO_BIN(x, 1)", uuid=canonical(u),
        expect={"sqlserver_shown": str(shown), "dotnet_bytes": dotnet.hex(), "mysql_swap_handed": str(uuid.UUID(bytes=mysql_handed))})

print(json.dumps({
    "name": "uuidforge conformance vectors",
    "format_version": 1,
    "description": "Inputs and expected outputs for UUID formats (RFC 9562 and draft-peabody-dispatch-new-uuid-format-01), "
                   "encodings, UUID_192, boundaries and sort-order adapters. See conformance/README.md for each kind.",
    "vectors": vectors,
}, indent=1, ensure_ascii=False))
