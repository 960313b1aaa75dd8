"""Slow and many clients against `uuidforge serve` on loopback: what each
attack holds on the server and what it costs the requests beside it.

    python3 scripts/bench_hostile.py BINARY [--peer BINARY] [--short]

For each binary (ours, then the peer's - an older build, when given) one
fresh server and three attacks, one after the other:

  slow heads    N clients send a request head one byte a second and never
                finish it
  slow uploads  N clients send a JSON body of 1 MB one byte a second
  many          three rounds of N keep-alive connections, each asking
                /healthz once and then idle, closed after the round

During each attack a probe asks /healthz, /metrics and /api/v1/uuids in
turn (a new connection each time, one request at a time) and records how
long each took. Figures per attack: the connections the server holds (its
sockets in /proc/PID/fd) at the peak and when the attack's time is up,
its resident memory (VmRSS) before, at the peak and three seconds after
the clients closed, and the probe's median and worst latency (and the
probes that got no answer within 30 s).

--short: tiny counts and times (the test command runs it so that it keeps
working; its figures mean nothing)."""

import argparse
import asyncio
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time

PROBES = ["/healthz", "/metrics", "/api/v1/uuids"]
PROBE_TIMEOUT = 30.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `serve` process on a free loopback port, its names store in a
    temporary directory."""

    def __init__(self, binary):
        self.port = free_port()
        self.dir = tempfile.TemporaryDirectory(prefix="uuidforge-hostile-")
        self.idle_sockets = 0
        self.proc = subprocess.Popen(
            [binary, "serve", "--bind", f"127.0.0.1:{self.port}",
             "--names-db", os.path.join(self.dir.name, "names.redb")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def status(self, key):
        """A field of /proc/PID/status in MiB."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def sockets(self):
        """The sockets the server holds beyond those it holds idle (its
        listener and the runtime's own)."""
        n = 0
        fd_dir = f"/proc/{self.proc.pid}/fd"
        for fd in os.listdir(fd_dir):
            try:
                if os.readlink(os.path.join(fd_dir, fd)).startswith("socket:"):
                    n += 1
            except OSError:
                pass
        return n - self.idle_sockets

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.dir.cleanup()


async def request(port, path):
    """Seconds until the whole answer to one GET arrived, or None."""
    started = time.monotonic()
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", port), PROBE_TIMEOUT)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     "Connection: close\r\n\r\n".encode())
        answer = await asyncio.wait_for(reader.read(), PROBE_TIMEOUT)
        writer.close()
        if not answer.startswith(b"HTTP/1.1 200"):
            return None
        return time.monotonic() - started
    except (OSError, asyncio.TimeoutError):
        return None


async def wait_ready(port):
    for _ in range(200):
        if await request(port, "/healthz") is not None:
            return
        await asyncio.sleep(0.05)
    sys.exit(f"bench_hostile.py: no server on port {port}")


async def connect_many(port, n):
    """n connections, opened 100 at a time (the listener's backlog is
    finite); those refused or reset are left out."""
    out = []
    for start in range(0, n, 100):
        batch = await asyncio.gather(
            *(asyncio.open_connection("127.0.0.1", port) for _ in range(start, min(n, start + 100))),
            return_exceptions=True)
        out.extend(c for c in batch if not isinstance(c, BaseException))
    return out


async def trickle(conns, seconds, byte):
    """One byte a second on every connection for `seconds`."""
    for _ in range(int(seconds)):
        await asyncio.sleep(1)
        for _, writer in conns:
            if not writer.is_closing():
                try:
                    writer.write(byte)
                except OSError:
                    pass


async def slow_heads(port, n, seconds):
    conns = await connect_many(port, n)
    for _, writer in conns:
        writer.write(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode())
    await trickle(conns, seconds, b"a")
    return conns


async def slow_uploads(port, n, seconds):
    conns = await connect_many(port, n)
    for _, writer in conns:
        writer.write(f"POST /api/v1/inspect HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n[".encode())
    await trickle(conns, seconds, b" ")
    return conns


async def many(port, n, seconds, rounds=3):
    for round_ in range(rounds):
        conns = await connect_many(port, n)
        for _, writer in conns:
            writer.write(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        await asyncio.gather(*(reader.readuntil(b"}") for reader, _ in conns), return_exceptions=True)
        await asyncio.sleep(seconds)
        if round_ < rounds - 1:
            close(conns)
            await asyncio.sleep(1)
    return conns


def close(conns):
    for _, writer in conns:
        writer.close()


async def attack(server, name, run):
    """Runs one attack with the probe and the samplers beside it."""
    port = server.port
    before = server.status("VmRSS")
    done = asyncio.Event()
    latencies, failed = [], 0
    peak_sockets, peak_rss = 0, before

    async def probe():
        nonlocal failed
        i = 0
        while not done.is_set():
            took = await request(port, PROBES[i % len(PROBES)])
            i += 1
            if took is None:
                failed += 1
            else:
                latencies.append(took)
            await asyncio.sleep(0.2)

    async def sample():
        nonlocal peak_sockets, peak_rss
        while not done.is_set():
            peak_sockets = max(peak_sockets, server.sockets())
            peak_rss = max(peak_rss, server.status("VmRSS"))
            await asyncio.sleep(0.25)

    tasks = [asyncio.create_task(probe()), asyncio.create_task(sample())]
    conns = await run()
    held_at_end = server.sockets()
    done.set()
    await asyncio.gather(*tasks)
    close(conns)
    await asyncio.sleep(3)
    after = server.status("VmRSS")
    lat = sorted(latencies)
    return {
        "attack": name,
        "opened": len(conns),
        "peak held": peak_sockets,
        "held at end": held_at_end,
        "RSS before": before,
        "RSS peak": max(peak_rss, after),
        "RSS after": after,
        "probe p50 ms": statistics.median(lat) * 1000 if lat else float("nan"),
        "probe max ms": lat[-1] * 1000 if lat else float("nan"),
        "probes failed": failed,
    }


async def measure(binary, counts):
    server = Server(binary)
    try:
        await wait_ready(server.port)
        await asyncio.sleep(0.5)
        idle = server.status("VmRSS")
        server.idle_sockets = server.sockets()
        heads, uploads, conns, seconds = counts
        rows = [
            await attack(server, f"{heads} slow heads", lambda: slow_heads(server.port, heads, seconds)),
            await attack(server, f"{uploads} slow uploads", lambda: slow_uploads(server.port, uploads, seconds)),
            await attack(server, f"3 x {conns} idle keep-alive", lambda: many(server.port, conns, seconds / 3)),
        ]
        return idle, rows
    finally:
        server.stop()


def table(label, idle, rows):
    print(f"\n{label} (idle RSS {idle:.1f} MiB)")
    cols = ["attack", "opened", "peak held", "held at end", "RSS before", "RSS peak",
            "RSS after", "probe p50 ms", "probe max ms", "probes failed"]
    print(" | ".join(cols))
    for r in rows:
        cells = []
        for c in cols:
            v = r[c]
            cells.append(f"{v:.1f}" if isinstance(v, float) else str(v))
        print(" | ".join(cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--peer", help="another uuidforge binary measured the same way after")
    parser.add_argument("--short", action="store_true")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    # heads, uploads, keep-alive connections per round, seconds per attack
    counts = (20, 20, 50, 3) if args.short else (1500, 1100, 4000, 35)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "unknown CPU")
    print(f"{cpu}, {os.cpu_count()} cores; header timeout 10 s and body timeout 30 s "
          f"(ours, by default); {counts[3]} s per attack")
    results = [(args.binary, *asyncio.run(measure(args.binary, counts)))]
    if args.peer:
        results.append((args.peer, *asyncio.run(measure(args.peer, counts))))
    for label, idle, rows in results:
        table(label, idle, rows)
    ours = results[0][2]
    failed = [r for r in ours if r["probes failed"]]
    if failed:
        sys.exit(f"bench_hostile.py: probes got no answer during {failed[0]['attack']}")


if __name__ == "__main__":
    main()
