#!/usr/bin/env bash
# cpu.sh measures CPU time per operation, for a machine too loaded for
# wall-clock benchmarks to mean anything: each row and implementation runs
# alone in its own process, at N iterations and at 1, and (cpu(N) - cpu(1))
# / N is its cost; rounds interleave the implementations. Prints one line per
# run: round, row, impl, iterations, user and system seconds.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/bench/out
mkdir -p "$OUT"
cd "$ROOT"
go test -c -o "$OUT/bench.test" ./bench/
cd "$OUT"
N=${N:-2000000}
for r in $(seq "${COUNT:-5}"); do
  for row in ClosedSuccess ClosedSuccessRate OpenRejection; do
    for impl in circuitgen gobreaker; do
      for n in 1 "$N"; do
        t=$( { /usr/bin/time -f "%U %S" ./bench.test -test.run '^$' -test.bench "^Benchmark$row\$/impl=$impl\$" -test.benchtime "${n}x" -test.count 1 >/dev/null; } 2>&1 | tail -1)
        echo "$r $row $impl $n $t"
      done
    done
  done
done
