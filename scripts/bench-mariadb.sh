#!/usr/bin/env bash
# uuidv7() of the uuidforge UDF library against MariaDB's own UUID() (v1),
# measured in the same run on the same server: many rows in one statement
# (SELECT SUM(LENGTH(f())) FROM seq_1_to_N), timed by the server itself
# (NOW(6) before and after, in one session), best of RUNS, the cost of the
# same statement over a constant subtracted. Prints ns per value and the
# ratio (target: uuidv7() at most 1.5x UUID()).
#   scripts/bench-mariadb.sh [--short]   (needs scripts/mariadb-setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=3000000 runs=5
[ "${1:-}" = --short ] && { rows=30000; runs=1; }
sock=/var/lib/uuidforge-mariadb/mysqld.sock
[ -S "$sock" ] || { echo "bench-mariadb: no server at $sock (run scripts/mariadb-setup.sh)" >&2; exit 2; }
# us EXPR: one statement over N rows, in µs (the server's clock).
us() {
  mariadb --socket="$sock" -uroot -N -B mysql -e "SET @t = NOW(6); SELECT SUM(LENGTH($1)) FROM seq_1_to_$rows INTO @s; SELECT TIMESTAMPDIFF(MICROSECOND, @t, NOW(6));"
}
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "MariaDB $(mariadb --socket="$sock" -uroot -N -B -e 'SELECT VERSION()'), $rows rows per statement, best of $runs (interleaved); $cpu"
# The four interleaved in every round, so that the machine's load drifts
# over all of them alike; the best of each.
exprs=("'01a223d6-4d66-7042-ad21-c60d0caf15eb'" "UUID()" "uuidv7()" "uuidv7_bin()")
best=("" "" "" "")
for _ in $(seq 1 "$runs"); do
  for i in 0 1 2 3; do
    t=$(us "${exprs[$i]}")
    if [ -z "${best[$i]}" ] || [ "$t" -lt "${best[$i]}" ]; then best[$i]=$t; fi
  done
done
bare=${best[0]} v1=${best[1]} v7=${best[2]} v7bin=${best[3]}
python3 - "$rows" "$bare" "$v1" "$v7" "$v7bin" <<'PY'
import sys
rows, bare, v1, v7, v7bin = (int(x) for x in sys.argv[1:])
ns = lambda us: max(us - bare, 0) * 1000 / rows
print(f"  statement over a constant: {bare * 1000 / rows:.1f} ns per row (subtracted)")
print(f"  UUID() (v1, built in):     {ns(v1):.1f} ns per value")
print(f"  uuidv7() (uuidforge UDF):  {ns(v7):.1f} ns per value = {ns(v7) / max(ns(v1), 1e-9):.2f}x UUID()")
print(f"  uuidv7_bin():              {ns(v7bin):.1f} ns per value = {ns(v7bin) / max(ns(v1), 1e-9):.2f}x UUID()")
PY
