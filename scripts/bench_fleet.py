#!/usr/bin/env python3
"""`uuidforge db find` over a fleet of three members against each
member's own `find`, on the clusters of scripts/fleet-setup.sh.

Each member holds the same schema (customers, orders referencing them,
events with a jsonb document and a text note that hold UUIDs, no index
on them) and ROWS events of its own. The value looked for is in one
member's jsonb documents, so every member scans its events.

Target (issue 35): the fleet's find at most 1.3x the slowest member's own
find. The three members are clusters on this one machine, so their
servers share its cores as real members would not: the peer is the three
members' own finds started at once (as from three shells), the last to
end. Measured for a scan (server work) and for index probes (little
server work: what the fleet adds shows), with the fleet command's own CPU
time. Every run times the peer, then the fleet; the median of RUNS
per-run ratios is reported (the machine's noise hits both sides).
Run through scripts/bench-fleet.sh.
"""

import os
import resource
import statistics
import subprocess
import sys
import time

BIN = os.environ["UUIDFORGE_BENCH_BIN"]
PORTS = [int(p) for p in os.environ["UUIDFORGE_BENCH_FLEET_PORTS"].split(",")][:3]
RUNS = int(os.environ.get("RUNS", "7"))
ROWS = int(os.environ.get("ROWS", "200000"))
SHORT = os.environ.get("BENCH_SHORT") == "1"
DB = "fleetbench"
NAMES = ["a", "b", "c"]


def psql(port, db, sql, user="uuidforge_admin"):
    env = dict(os.environ, PGPASSWORD="uuidforge")
    p = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(port),
                        "-U", user, "-d", db, "-c", sql], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"bench-fleet: psql {port}/{db}: {p.stderr.strip()}")
    return p.stdout.strip()


def url(port):
    return f"postgres://uuidforge:uuidforge@127.0.0.1:{port}/{DB}"


def generate(i, port):
    """The member's database, made again when its size is not ROWS."""
    exists = psql(port, "postgres", f"SELECT count(*) FROM pg_database WHERE datname = '{DB}'") == "1"
    if exists and psql(port, DB, "SELECT coalesce((SELECT obj_description('events'::regclass)), '')") == str(ROWS):
        return
    psql(port, "postgres", f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
    psql(port, "postgres", f"CREATE DATABASE {DB} OWNER uuidforge")
    customers = max(ROWS // 20, 10)
    psql(port, DB, f"""
        SET ROLE uuidforge;
        CREATE TABLE customers (id uuid PRIMARY KEY, name text NOT NULL);
        CREATE TABLE orders (id uuid PRIMARY KEY, customer_id uuid NOT NULL REFERENCES customers,
                             placed_at timestamptz NOT NULL);
        CREATE INDEX ON orders (customer_id);
        CREATE TABLE events (id uuid PRIMARY KEY, order_id uuid, payload jsonb, note text);
        INSERT INTO customers SELECT md5('c{i}:' || g)::uuid, 'customer ' || g FROM generate_series(1, {customers}) g;
        INSERT INTO orders SELECT md5('o{i}:' || g)::uuid, md5('c{i}:' || (g % {customers} + 1))::uuid,
               now() - g * interval '1 second' FROM generate_series(1, {ROWS // 4}) g;
        INSERT INTO events SELECT md5('e{i}:' || g)::uuid, md5('o{i}:' || (g % {ROWS // 4} + 1))::uuid,
               jsonb_build_object('actor', md5('a{i}:' || g)::uuid, 'seq', g),
               'see https://example.com/e/' || md5('n{i}:' || g)::uuid || ' for details'
          FROM generate_series(1, {ROWS}) g;
        COMMENT ON TABLE events IS '{ROWS}';
        ANALYZE;""")


def find(args, ok=(0, 1)):
    """Seconds and output of `uuidforge db ARGS` (find exits 1 on no hit)."""
    start = time.perf_counter()
    p = subprocess.run([BIN, "db", *args], capture_output=True, text=True,
                       env={k: v for k, v in os.environ.items() if k != "UUIDFORGE_DB"})
    seconds = time.perf_counter() - start
    if p.returncode not in ok:
        sys.exit(f"bench-fleet: uuidforge db {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return seconds, p.stdout


def together(commands):
    """Starts `commands` at once; the seconds until the last one ended, and
    each one's seconds."""
    env = {k: v for k, v in os.environ.items() if k != "UUIDFORGE_DB"}
    start = time.perf_counter()
    procs = [subprocess.Popen([BIN, "db", *c], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
             for c in commands]
    ends = []
    for p in procs:
        _, err = p.communicate()
        ends.append(time.perf_counter() - start)
        if p.returncode not in (0, 1):
            sys.exit(f"bench-fleet: uuidforge db exited {p.returncode}: {err.decode()}")
    return max(ends), ends


def main():
    if len(PORTS) < 3:
        sys.exit("bench-fleet: three fleet ports expected (scripts/fleet-setup.sh)")
    print(f"== {ROWS} events per member on ports {PORTS}", flush=True)
    for i, port in enumerate(PORTS):
        generate(i, port)
    scanned = psql(PORTS[1], DB, "SELECT payload->>'actor' FROM events WHERE (payload->>'seq')::int = 17")
    indexed = psql(PORTS[1], DB, "SELECT customer_id FROM orders LIMIT 1")
    members = [f"--db={name}={url(port)}" for name, port in zip(NAMES, PORTS)]
    cases = [
        ("scan (jsonb and text columns, no index)", [scanned]),
        ("index probes (--indexed-only)", [indexed, "--indexed-only"]),
    ]
    print(f"{'measure':<48} {'seconds':<9} {'target':<9} verdict")
    verdicts = []
    for label, args in cases:
        ratios, alone, fleet_times, cpu = [], [], [], []
        for _ in range(RUNS):
            slowest, _ = together([["--db", url(port), "find", *args] for port in PORTS])
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            fleet, out = find([*members, "find", *args, "--json"], ok=(0,))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if '"member":"b"' not in out.replace(" ", ""):
                sys.exit(f"bench-fleet: the fleet's find did not name member b: {out}")
            alone.append(slowest)
            fleet_times.append(fleet)
            ratios.append(fleet / slowest)
        ratio = statistics.median(ratios)
        verdicts.append(ratio <= 1.3)
        print(label)
        peer = "  each member's own find, all at once (peer)"
        print(f"{peer:<48} {statistics.median(alone):<9.3f} {'peer':<9}")
        print(f"{'  find over the fleet of 3':<48} {statistics.median(fleet_times):<9.3f} {'<= 1.3x':<9} "
              f"{'ok' if ratio <= 1.3 else 'MISSED'} {ratio:.2f}x (median of {RUNS} runs' ratios); "
              f"the command's own CPU {statistics.median(cpu) * 1000:.0f} ms", flush=True)
    return 0 if all(verdicts) or SHORT else 1


if __name__ == "__main__":
    sys.exit(main())
