#!/usr/bin/env bash
# genbench compares circuitgen with moq (github.com/matryer/moq) on the same
# 300-method interface: wall time and peak RSS of each, median of RUNS runs,
# and circuitgen's ratio to moq. Target: at most 1.0x.
#
# Usage: bench/genbench.sh [RUNS]    (make bench)
set -euo pipefail

RUNS=${1:-5}
METHODS=300
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "building circuitgen and installing moq@v0.8.1 into $TMP/bin" >&2
(cd "$ROOT" && go build -o "$TMP/bin/circuitgen" ./cmd/circuitgen)
GOBIN="$TMP/bin" GOFLAGS=-mod=mod go install github.com/matryer/moq@v0.8.1

# A module with one package holding a 300-method interface.
MOD="$TMP/mod"
mkdir -p "$MOD/big" "$TMP/out"
printf 'module benchmod\n\ngo 1.26\n' >"$MOD/go.mod"
{
	printf 'package big\n\nimport (\n\t"context"\n\t"net/http"\n)\n\n'
	printf '// Result is a result.\ntype Result struct{ ID string }\n\n'
	printf '// Big is a client with %d methods.\n//\n' "$METHODS"
	printf '//circuitgen:guard circuit=big errors=context.DeadlineExceeded statuses=502-504\n'
	printf 'type Big interface {\n'
	for i in $(seq 0 $((METHODS - 1))); do
		case $((i % 3)) in
		0) printf '\tGet%d(ctx context.Context, id string, opts ...int) (*Result, error)\n' "$i" ;;
		1) printf '\tDo%d(ctx context.Context, req *http.Request) (*http.Response, error)\n' "$i" ;;
		2) printf '\tPut%d(ctx context.Context, id string, body []byte, n int) error\n' "$i" ;;
		esac
	done
	printf '}\n'
} >"$MOD/big/big.go"

# measure CMD... prints "seconds kilobytes" of one run.
measure() {
	if ! /usr/bin/time -o "$TMP/time.txt" -f '%e %M' "$@" >/dev/null 2>"$TMP/err.txt"; then
		cat "$TMP/err.txt" >&2
		return 1
	fi
	tail -1 "$TMP/time.txt"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

run_tool() { # name, then the command; KEEP=1 keeps a previous output
	local name=$1
	shift
	: >"$TMP/$name.t"
	: >"$TMP/$name.m"
	"$@" >/dev/null # warm the build cache
	for _ in $(seq "$RUNS"); do
		[ "${KEEP:-0}" = 1 ] || rm -f "$MOD/big/guarded_gen.go"
		read -r secs kb < <(cd "$MOD/big" && measure "$@")
		echo "$secs" >>"$TMP/$name.t"
		echo "$kb" >>"$TMP/$name.m"
	done
}

cd "$MOD/big"
run_tool circuitgen "$TMP/bin/circuitgen"
KEEP=1 run_tool again "$TMP/bin/circuitgen" # over its previous output, as go generate reruns and -check run
rm -f "$MOD/big/guarded_gen.go"
run_tool moq "$TMP/bin/moq" -out "$TMP/out/big_moq.go" . Big

cg_t=$(median <"$TMP/circuitgen.t")
cg_m=$(median <"$TMP/circuitgen.m")
mq_t=$(median <"$TMP/moq.t")
mq_m=$(median <"$TMP/moq.m")
lines=$(cd "$MOD/big" && "$TMP/bin/circuitgen" -out guarded_gen.go && wc -l <guarded_gen.go)

printf '%d-method interface, median of %d runs (generated file: %d lines)\n' "$METHODS" "$RUNS" "$lines"
printf '%-11s %9s %12s\n' tool "wall (s)" "peak RSS (MB)"
printf '%-11s %9s %12.1f\n' circuitgen "$cg_t" "$(echo "$cg_m / 1024" | bc -l)"
printf '%-11s %9s %12.1f\n' "  (rerun)" "$(median <"$TMP/again.t")" "$(echo "$(median <"$TMP/again.m") / 1024" | bc -l)"
printf '%-11s %9s %12.1f\n' moq "$mq_t" "$(echo "$mq_m / 1024" | bc -l)"
printf 'ratio circuitgen/moq: wall %.2fx, peak RSS %.2fx (target <= 1.0x)\n' \
	"$(echo "$cg_t / $mq_t" | bc -l)" "$(echo "$cg_m / $mq_m" | bc -l)"
