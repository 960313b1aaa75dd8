"""uuidforge for Python against its peers, measured in one run: per call
(ns), and each peer's ratio to uuidforge. Every value is made the way its
package's users make it; the table says what each returns.

    python bench_python.py [--short]

--short: tiny counts and one round (the test command runs it so that the
benchmark keeps working; its figures mean nothing)."""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import timeit
import uuid

import fastuuid
import ulid
import uuid6
import uuid_utils
import uuid_utils.compat

import uuidforge


def cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def per_call(fn, calls_per_run: int, rounds: int, number: int) -> float:
    """Median over `rounds` of the ns per call of `fn` (which makes
    `calls_per_run` values each time it is called `number` times)."""
    times = timeit.repeat(fn, repeat=rounds, number=number)
    return statistics.median(times) / (number * calls_per_run) * 1e9


def batch_made(n: int, rounds: int, number: int) -> float:
    """ns per value of uuid7_batch(n) to make the list, the list freed
    outside the timing."""
    import time

    best = []
    for _ in range(rounds):
        total = 0.0
        for _ in range(number):
            t = time.perf_counter()
            values = uuidforge.uuid7_batch(n)
            total += time.perf_counter() - t
            del values
        best.append(total / (number * n) * 1e9)
    return statistics.median(best)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--short", action="store_true", help="tiny counts, one round")
    args = p.parse_args()
    rounds, number, batch = (1, 200, 100) if args.short else (7, 200_000, 10_000)
    batch_number = 2 if args.short else 50

    text = str(uuidforge.uuid7())
    value = uuid.UUID(text)
    b32 = uuidforge.to_base32(value)
    uu_value = uuid_utils.UUID(text)
    ulid_value = ulid.ULID.from_uuid(value)

    print(f"CPU: {cpu()}; Python {platform.python_version()} ({sys.implementation.name}); "
          f"uuidforge {uuidforge.__version__}, uuid-utils {uuid_utils.__version__}, "
          f"fastuuid {getattr(fastuuid, '__version__', '?')}, uuid6 {getattr(uuid6, '__version__', '?')}, "
          f"python-ulid {getattr(ulid, '__version__', '?')}")
    print(f"median of {rounds} rounds; ratio = peer / uuidforge (above 1: uuidforge is faster)")
    print()
    rows: list[tuple[str, str, float, str, float]] = []

    def group(what: str, ours: tuple[str, float], peers: list[tuple[str, float]]) -> None:
        for name, t in peers:
            rows.append((what, ours[0], ours[1], name, t))

    one = lambda f: per_call(f, 1, rounds, number)  # noqa: E731
    ours = ("uuidforge.uuid7() -> uuid.UUID", one(uuidforge.uuid7))
    group("uuid7(), one value", ours, [
        ("uuid_utils.uuid7() -> its own type", one(uuid_utils.uuid7)),
        ("uuid_utils.compat.uuid7() -> uuid.UUID", one(uuid_utils.compat.uuid7)),
        ("fastuuid.uuid7() -> its own type", one(fastuuid.uuid7)),
        ("uuid6.uuid7() -> uuid6.UUID", one(uuid6.uuid7)),
        ("uuid.uuid4() (stdlib, no v7 before 3.14)", one(uuid.uuid4)),
    ])

    many = lambda f: per_call(f, batch, rounds, batch_number)  # noqa: E731
    ours = (f"uuidforge.uuid7_batch({batch}) (list made and freed)", many(lambda: uuidforge.uuid7_batch(batch)))
    made = batch_made(batch, rounds, batch_number)
    group(f"{batch} values", ours, [
        ("[uuid_utils.uuid7() ...] its own type", many(lambda: [uuid_utils.uuid7() for _ in range(batch)])),
        ("[uuid_utils.compat.uuid7() ...]", many(lambda: [uuid_utils.compat.uuid7() for _ in range(batch)])),
        ("[fastuuid.uuid7() ...] its own type", many(lambda: [fastuuid.uuid7() for _ in range(batch)])),
    ])

    ours = ("uuidforge.parse(str) -> uuid.UUID", one(lambda: uuidforge.parse(text)))
    group("parse the canonical form", ours, [
        ("uuid_utils.UUID(str) -> its own type", one(lambda: uuid_utils.UUID(text))),
        ("fastuuid.UUID(str) -> its own type", one(lambda: fastuuid.UUID(text))),
        ("uuid.UUID(str) (stdlib)", one(lambda: uuid.UUID(text))),
    ])

    ours = ("uuidforge.to_base32(uuid.UUID)", one(lambda: uuidforge.to_base32(value)))
    group("Crockford Base32 encode", ours, [
        ("str(ulid.ULID.from_uuid(uuid.UUID)) (python-ulid)", one(lambda: str(ulid.ULID.from_uuid(value)))),
        ("str(ulid.ULID) alone", one(lambda: str(ulid_value))),
    ])
    ours = ("uuidforge.from_base32(str) -> uuid.UUID", one(lambda: uuidforge.from_base32(b32)))
    group("Crockford Base32 decode", ours, [
        ("ulid.ULID.from_str(str).to_uuid() (python-ulid)", one(lambda: ulid.ULID.from_str(b32).to_uuid())),
    ])

    width = max(len(r[3]) for r in rows) + 2
    last = None
    for what, ours_name, ours_ns, peer, peer_ns in rows:
        if what != last:
            print(f"{what}: {ours_name}: {ours_ns:.0f} ns")
            last = what
        print(f"  {peer:<{width}} {peer_ns:8.0f} ns   ratio {peer_ns / ours_ns:5.2f}")
    print(f"uuid7_batch({batch}): {made:.1f} ns per value to make the list (freed outside the timing)")
    _ = uu_value
    return 0


if __name__ == "__main__":
    sys.exit(main())
