#!/usr/bin/env bash
# run.sh runs bench/'s benchmarks (BENCHMARKS.md) and summarises them.
#
# The test binary is built once and run COUNT times in a row, every
# benchmark once per round, so that the rounds interleave the
# implementations: a noisy moment hits all of them, not one. Then:
# benchstat over the rounds (columns per implementation), the ratio tables
# (wall time, and CPU time of the rows that report it: ratios-cpu.md) and
# bench/results.svg from bench/chart, and bench/genbench.sh (circuitgen
# vs moq). Raw output goes to bench/out/ (gitignored).
#
# Usage: bench/run.sh                  (make bench)
#   COUNT=6          rounds
#   BENCHTIME=300ms  -test.benchtime of the rows that do not write
#   WRITE_BENCHTIME=60x  -test.benchtime of the rows that write (a durable
#                    write costs milliseconds: a fixed count keeps rounds short)
#   BENCH=.          -test.bench pattern (both kinds of row)
#   GENBENCH=1       0 skips bench/genbench.sh
#   SVG=bench/results.svg  where the chart goes
set -euo pipefail

COUNT=${COUNT:-6}
BENCHTIME=${BENCHTIME:-300ms}
WRITE_BENCHTIME=${WRITE_BENCHTIME:-60x}
BENCH=${BENCH:-.}
GENBENCH=${GENBENCH:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/bench/out
SVG=${SVG:-$ROOT/bench/results.svg}
BENCHSTAT="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"
cd "$ROOT"
mkdir -p "$OUT"
RAW=$OUT/raw.txt
: >"$RAW"

tmp=${TMPDIR:-/tmp}
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "go: $(go version)"
	echo "nproc: $(nproc)"
	echo "cpu: $(lscpu | sed -n 's/^Model name: *//p')"
	echo "kernel: $(uname -sr)"
	echo "tempdir: $tmp on $(df -T "$tmp" | awk 'NR==2 {print $2, $1}')"
	echo "count: $COUNT, benchtime: $BENCHTIME (writes: $WRITE_BENCHTIME), bench: $BENCH"
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/machine.txt"
cat "$OUT/machine.txt"

go test -c -o "$OUT/bench.test" ./bench/
for i in $(seq "$COUNT"); do
	echo "round $i of $COUNT (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	for pass in "ClosedSuccess|ClosedSuccessByName|ClosedSuccessRate|OpenRejection|OpenRejectionByName|ClosedSuccessRateParallel|OpenRejectionParallel|ClosedSuccessParallel|ManyCircuits|Snapshot|MultiProcess $BENCHTIME" \
		"FailureCounts|FailureOpens|HalfOpenCycle $WRITE_BENCHTIME"; do
		read -r rows benchtime <<<"$pass"
		(cd "$OUT" && ./bench.test -test.run '^$' -test.bench "^Benchmark($rows)\$/$BENCH" -test.benchmem \
			-test.benchtime "$benchtime" -test.count 1) | tee -a "$RAW" | grep -E '^Benchmark' >&2
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/machine.txt"

$BENCHSTAT -col /impl "$RAW" | tee "$OUT/benchstat.txt"
note="$(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p')), $(uname -sr), $(go env GOVERSION), temp dir on $(df -T "$tmp" | awk 'NR==2 {print $2}'); $COUNT interleaved rounds × $BENCHTIME (writes: $WRITE_BENCHTIME)"
go run ./bench/chart -in "$RAW" -svg "$SVG" -note "$note" | tee "$OUT/ratios.md"
go run ./bench/chart -in "$RAW" -svg "$OUT/cpu.svg" -note "$note" -unit cpu-ns/op | tee "$OUT/ratios-cpu.md"

if [ "$GENBENCH" != 0 ]; then
	bash bench/genbench.sh | tee "$OUT/genbench.txt"
fi
