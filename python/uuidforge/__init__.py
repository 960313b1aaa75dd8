"""UUIDv7 for Python, as the standard ``uuid.UUID``.

``uuidforge.uuid7()`` returns exactly ``uuid.UUID`` (not a subclass), so
psycopg, Django, SQLAlchemy and pydantic take it as it is. Values are
strictly increasing across every thread of the process in the order they
are handed out; after ``os.fork()`` (and in ``multiprocessing`` workers)
the child's random source is reseeded by itself, so parent and children
never share a value or a random stream, with nothing to call; and
``uuid7(host_wide=True)`` orders values across every process of the host
that uses the same cell, the command line's ``uuidforge gen --host-wide``
included.

>>> import uuid, uuidforge
>>> a, b = uuidforge.uuid7(), uuidforge.uuid7()
>>> type(a) is uuid.UUID and a.version == 7 and a < b
True
>>> str(uuidforge.uuid7_from(1645557742000, "orders:42"))
'017f22e2-79b0-7496-923e-225cc233cada'
"""

from __future__ import annotations

import datetime as _datetime
import json as _json
import uuid as _uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from ._native import (
    FieldError,
    Generator,
    GeneratorError,
    Hider,
    ParseError,
    UUID192,
    __version__,
    bounds,
    format,
    from_base32,
    parse,
    partition_key,
    partition_range,
    timestamp,
    to_base32,
    uuid1,
    uuid3,
    uuid4,
    uuid5,
    uuid6,
    uuid7,
    uuid7_batch,
    uuid7_from,
    uuid8,
)
from . import _native

# The native functions say they come from the package, not from its
# private module: Django's migration writer, pickle and documentation
# tools name a callable by its __module__ (a migration file should say
# `default=uuidforge.uuid7`, never `uuidforge._native.uuid7`).
for _function in vars(_native).values():
    if callable(_function) and getattr(_function, "__module__", None) == _native.__name__:
        _function.__module__ = __name__  # a builtin's __module__ is writable
del _function

__all__ = [
    "FieldError",
    "Generator",
    "GeneratorError",
    "Hider",
    "Inspection",
    "LayoutGuess",
    "ParseError",
    "Time",
    "UUID192",
    "__version__",
    "bounds",
    "format",
    "from_base32",
    "inspect",
    "parse",
    "partition_key",
    "partition_range",
    "timestamp",
    "to_base32",
    "uuid1",
    "uuid3",
    "uuid4",
    "uuid5",
    "uuid6",
    "uuid7",
    "uuid7_batch",
    "uuid7_from",
    "uuid8",
]

_EPOCH = _datetime.datetime(1970, 1, 1, tzinfo=_datetime.timezone.utc)


@dataclass(frozen=True)
class Time:
    """An instant read from a UUID, with the precision its layout holds.

    ``precision`` is one of ``"ms"``, ``"us"``, ``"ns"``, ``"100ns"``,
    ``"10ns"`` or a fraction such as ``"ms/4096"``; ``unix_nanos`` is exact
    (``at`` is rounded down to the microsecond, as ``datetime`` holds, and
    is None from the year 10000 on, which a UUIDv7 reaches but ``datetime``
    cannot hold).
    """

    at: Optional[_datetime.datetime]
    unix_nanos: int
    precision: str
    iso8601: str

    @classmethod
    def _of(cls, d: Optional[Dict[str, Any]]) -> Optional["Time"]:
        if d is None:
            return None
        nanos = int(d["unix_ns"])
        try:
            at: Optional[_datetime.datetime] = _EPOCH + _datetime.timedelta(microseconds=nanos // 1000)
        except OverflowError:
            at = None
        return cls(at=at, unix_nanos=nanos, precision=d["precision"], iso8601=d["iso8601"])


@dataclass(frozen=True)
class LayoutGuess:
    """Which generator most likely wrote a UUIDv7, read from its bits.

    ``layout`` is the best guess (``"counter18"``: uuidforge's default,
    ``"counter42"``: the Rust uuid crate and LiosK's uuid7, ``"fraction12"``:
    PostgreSQL 18, ``"random"``, ...); ``ranking`` every layout with its
    probability; one value alone is weak evidence (``values``).
    """

    layout: str
    confidence: float
    ranking: List[Tuple[str, float]]
    values: int


@dataclass(frozen=True)
class Inspection:
    """What ``inspect`` reads in a UUID.

    ``timestamp`` is set for v1, v6 and v7 (and the B.1 reading of v8);
    ``layout_guess`` and ``draft01`` (the value read as the 2021 draft's
    UUIDv7) for v7; ``fields`` maps each field of the version to its value
    as text; ``raw`` is everything, as ``uuidforge inspect --json`` prints
    it.
    """

    uuid: _uuid.UUID
    version: int
    version_name: str
    variant: str
    special: Optional[str]
    timestamp: Optional[Time]
    fields: Dict[str, str]
    layout_guess: Optional[LayoutGuess]
    draft01: Optional[Dict[str, Time]]
    raw: Dict[str, Any] = field(repr=False)


def inspect(u: Union[_uuid.UUID, str, bytes]) -> Inspection:
    """Reads everything a UUID says: version, variant, time at its
    precision, the fields, and for a v7 the generator that likely wrote it
    and its reading as a 2021 draft UUIDv7.

    >>> r = inspect("C232AB00-9414-11EC-B3C8-9F6BDECED846")
    >>> (r.version, r.timestamp.iso8601)
    (1, '2022-02-22T19:22:22.0000000Z')
    """
    raw = _json.loads(_native._inspect_json(u))
    guess = raw.get("layout_guess")
    draft = raw.get("draft01")
    return Inspection(
        uuid=_uuid.UUID(raw["uuid"]),
        version=raw["version"],
        version_name=raw["version_name"],
        variant=raw["variant"],
        special=raw.get("special"),
        timestamp=Time._of(raw.get("timestamp") or raw.get("v8_b1_timestamp")),
        fields={f["name"]: f["value"] for f in raw["fields"]},
        layout_guess=None
        if guess is None
        else LayoutGuess(
            layout=guess["layout"],
            confidence=guess["confidence"],
            ranking=[(name, p) for name, p in guess["ranking"]],
            values=guess["values"],
        ),
        draft01=None if draft is None else {k: Time._of(v) for k, v in draft.items()},
        raw=raw,
    )
