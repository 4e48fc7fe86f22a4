#!/usr/bin/env bash
# genbench compares circuitgen with moq (github.com/matryer/moq v0.8.1) on
# the same 300-method interface, in the case CI and `go generate` reruns hit
# most: a module that requires circuitgen (through a replace of this
# checkout) and already holds both tools' previous outputs. The two tools run
# interleaved, RUNS times each; it prints the median wall time and peak RSS
# (from /usr/bin/time -v) of each, and circuitgen's ratio to moq. Target: at
# most 1.0x on both.
#
# Usage: bench/genbench.sh [RUNS]    (make bench)
set -euo pipefail

RUNS=${1:-7}
METHODS=300
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "building circuitgen and installing moq@v0.8.1 into $TMP/bin" >&2
(cd "$ROOT" && go build -o "$TMP/bin/circuitgen" ./cmd/circuitgen)
GOBIN="$TMP/bin" GOFLAGS=-mod=mod go install github.com/matryer/moq@v0.8.1

# A module that requires circuitgen, as one using it does, with one package
# holding a 300-method interface.
MOD="$TMP/mod"
mkdir -p "$MOD/big"
cat >"$MOD/go.mod" <<EOF
module benchmod

go 1.26

require github.com/circuitgen/circuitgen v0.0.0

replace github.com/circuitgen/circuitgen => $ROOT
EOF
cp "$ROOT/go.sum" "$MOD/go.sum"
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

CIRCUITGEN=("$TMP/bin/circuitgen")
MOQ=("$TMP/bin/moq" -out big_moq.go . Big)

# measure NAME CMD... runs CMD in the package and appends its wall time (s)
# and peak RSS (kB) to $TMP/NAME.t and $TMP/NAME.m.
measure() {
	local name=$1
	shift
	if ! (cd "$MOD/big" && /usr/bin/time -v -o "$TMP/time.txt" "$@" >/dev/null 2>"$TMP/err.txt"); then
		cat "$TMP/err.txt" "$TMP/time.txt" >&2
		return 1
	fi
	awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$TMP/time.txt" >>"$TMP/$name.t"
	awk -F': ' '/Maximum resident set size/ {print $2}' "$TMP/time.txt" >>"$TMP/$name.m"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Both previous outputs exist before the first measured run, and the build
# cache is warm, as in a working copy.
(cd "$MOD/big" && "${CIRCUITGEN[@]}" && "${MOQ[@]}" && go mod tidy >/dev/null 2>&1 && go vet . )
: >"$TMP/circuitgen.t" ; : >"$TMP/circuitgen.m" ; : >"$TMP/moq.t" ; : >"$TMP/moq.m"
for _ in $(seq "$RUNS"); do
	measure circuitgen "${CIRCUITGEN[@]}"
	measure moq "${MOQ[@]}"
done

cg_t=$(median <"$TMP/circuitgen.t")
cg_m=$(median <"$TMP/circuitgen.m")
mq_t=$(median <"$TMP/moq.t")
mq_m=$(median <"$TMP/moq.m")
lines=$(wc -l <"$MOD/big/guarded_gen.go")

printf '%d-method interface in a module requiring circuitgen, previous outputs present,\n' "$METHODS"
printf 'runs interleaved, median of %d each (generated file: %d lines)\n' "$RUNS" "$lines"
printf '%-11s %9s %14s\n' tool "wall (s)" "peak RSS (MB)"
printf '%-11s %9s %14.1f\n' circuitgen "$cg_t" "$(echo "$cg_m / 1024" | bc -l)"
printf '%-11s %9s %14.1f\n' moq "$mq_t" "$(echo "$mq_m / 1024" | bc -l)"
printf 'ratio circuitgen/moq: wall %.2fx, peak RSS %.2fx (target <= 1.0x)\n' \
	"$(echo "$cg_t / $mq_t" | bc -l)" "$(echo "$cg_m / $mq_m" | bc -l)"
