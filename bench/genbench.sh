#!/usr/bin/env bash
# genbench compares circuitgen with moq (github.com/matryer/moq v0.8.1) on
# what users run: a scratch module that requires circuitgen (through a
# replace of this checkout), both tools' previous outputs present, each tool
# run in the package's directory as go generate runs it. The two tools run
# interleaved (circuitgen, moq, circuitgen, moq, ...), RUNS times each; it
# prints the median wall time and peak RSS (from /usr/bin/time -v) of each,
# and circuitgen's ratio to moq. Target: at most 1.0x on both.
#
# Interfaces:
#   big    a 300-method interface, marked with a directive;
#   cmds   go-redis's Cmdable (700-odd methods), listed in a manifest (moq
#          mocks a local interface embedding it);
#   repo   a 45-method repository interface over the package's own types;
#   s3     5 methods of the AWS SDK's S3 client (needs the module proxy;
#          skipped when github.com/aws/aws-sdk-go-v2/service/s3 cannot be
#          downloaded).
# Cases:
#   unchanged  nothing changed since the previous run: the build cache
#              answers what it can;
#   edited     a file of the package (edit.go) is rewritten with a new
#              constant before each run of either tool, as when a user
#              changes the package and runs go generate.
# Then one cold run of each tool on s3, each with an empty build cache
# (GOCACHE), as the first run on a machine.
#
# Usage: bench/genbench.sh [RUNS]    (make bench)
set -euo pipefail

RUNS=${1:-7}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "building circuitgen and installing moq@v0.8.1 into $TMP/bin" >&2
(cd "$ROOT" && go build -o "$TMP/bin/circuitgen" ./cmd/circuitgen)
GOBIN="$TMP/bin" GOFLAGS=-mod=mod go install github.com/matryer/moq@v0.8.1
CG="$TMP/bin/circuitgen"
MOQ="$TMP/bin/moq"

# A module that requires circuitgen, as one using it does.
MOD="$TMP/mod"
mkdir -p "$MOD"
cat >"$MOD/go.mod" <<EOF
module benchmod

go 1.26

require github.com/circuitgen/circuitgen v0.0.0

replace github.com/circuitgen/circuitgen => $ROOT
EOF
cp "$ROOT/go.sum" "$MOD/go.sum"

# big: 300 methods.
mkdir -p "$MOD/big"
{
	printf 'package big\n\nimport (\n\t"context"\n\t"net/http"\n)\n\n'
	printf '// Result is a result.\ntype Result struct{ ID string }\n\n'
	printf '// Big is a client with 300 methods.\n//\n'
	printf '//circuitgen:guard circuit=big errors=context.DeadlineExceeded statuses=502-504\n'
	printf 'type Big interface {\n'
	for i in $(seq 0 299); do
		case $((i % 3)) in
		0) printf '\tGet%d(ctx context.Context, id string, opts ...int) (*Result, error)\n' "$i" ;;
		1) printf '\tDo%d(ctx context.Context, req *http.Request) (*http.Response, error)\n' "$i" ;;
		2) printf '\tPut%d(ctx context.Context, id string, body []byte, n int) error\n' "$i" ;;
		esac
	done
	printf '}\n'
} >"$MOD/big/big.go"

# repo: 45 methods over the package's own types.
mkdir -p "$MOD/repo"
{
	printf 'package repo\n\nimport (\n\t"context"\n\t"errors"\n\t"time"\n)\n\n'
	printf '// ErrConflict is a failed write.\nvar ErrConflict = errors.New("conflict")\n\n'
	for e in User Order Invoice; do
		printf '// %s is a row.\ntype %s struct {\n\tID      int64\n\tName    string\n\tCreated time.Time\n}\n\n' "$e" "$e"
		printf '// %sFilter selects rows.\ntype %sFilter struct {\n\tName  string\n\tLimit int\n}\n\n' "$e" "$e"
	done
	printf '// Repository is a storage layer with 45 methods.\n//\n'
	printf '//circuitgen:guard circuit=db errors=context.DeadlineExceeded,ErrConflict\n'
	printf 'type Repository interface {\n'
	for e in User Order Invoice; do
		for v in Get Find; do
			printf '\t%s%s(ctx context.Context, id int64) (*%s, error)\n' "$v" "$e" "$e"
		done
		for v in List Search Scan; do
			printf '\t%s%ss(ctx context.Context, f %sFilter) ([]%s, error)\n' "$v" "$e" "$e" "$e"
		done
		for v in Create Update Upsert; do
			printf '\t%s%s(ctx context.Context, v *%s) error\n' "$v" "$e" "$e"
		done
		for v in Delete Archive Restore; do
			printf '\t%s%s(ctx context.Context, id int64) error\n' "$v" "$e"
		done
		printf '\tCount%ss(ctx context.Context, f %sFilter) (int, error)\n' "$e" "$e"
		printf '\tTouch%s(ctx context.Context, id int64, at time.Time) error\n' "$e"
		printf '\tRename%s(ctx context.Context, id int64, name string) (*%s, error)\n' "$e" "$e"
		printf '\tExists%s(ctx context.Context, id int64) (bool, error)\n' "$e"
	done
	printf '}\n'
} >"$MOD/repo/repo.go"

# cmds: go-redis's Cmdable through a manifest.
REDIS=$(awk '$1 == "github.com/redis/go-redis/v9" {print $2}' "$ROOT/runtime/redisstore/go.mod")
(cd "$MOD" && go mod edit -require="github.com/redis/go-redis/v9@$REDIS")
mkdir -p "$MOD/cmds"
printf 'package cmds\n\nimport "github.com/redis/go-redis/v9"\n\n// Cmdable is the command set of go-redis.\ntype Cmdable interface{ redis.Cmdable }\n' >"$MOD/cmds/cmdable.go"

# s3: 5 methods of the S3 client, when the module can be had.
S3=1
mkdir -p "$MOD/s3"
cat >"$MOD/s3/s3.go" <<'EOF'
package s3

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Objects is the part of the S3 client an application uses.
//
//circuitgen:guard circuit=s3 errors=github.com/aws/smithy-go.APIError statuses=500-599
type Objects interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, opts ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}
EOF
if ! (cd "$MOD" && GOFLAGS=-mod=mod go get github.com/aws/aws-sdk-go-v2/service/s3 github.com/aws/smithy-go >/dev/null 2>&1); then
	echo "s3: github.com/aws/aws-sdk-go-v2/service/s3 cannot be downloaded: skipped" >&2
	rm -rf "$MOD/s3"
	S3=0
fi

# Both previous outputs exist before the first measured run, and the build
# cache is warm, as in a working copy.
(cd "$MOD" && go mod tidy)
(cd "$MOD/big" && "$CG")
(cd "$MOD/repo" && "$CG")
(cd "$MOD/cmds" && "$CG" init -source github.com/redis/go-redis/v9.Cmdable -o circuitgen.yaml >/dev/null &&
	sed -i 's/^    errors: \[\]/    errors: [context.DeadlineExceeded]/; /^    statuses: /d' circuitgen.yaml &&
	"$CG" -manifest circuitgen.yaml)
if [ "$S3" = 1 ]; then (cd "$MOD/s3" && "$CG"); fi
(cd "$MOD" && go mod tidy)
(cd "$MOD/big" && "$MOQ" -out big_moq.go . Big)
(cd "$MOD/repo" && "$MOQ" -out repo_moq.go . Repository)
(cd "$MOD/cmds" && "$MOQ" -out cmdable_moq.go . Cmdable)
if [ "$S3" = 1 ]; then (cd "$MOD/s3" && "$MOQ" -out s3_moq.go . Objects); fi
(cd "$MOD" && go vet ./...)

# measure NAME PKG EDIT CMD... runs CMD in package PKG, first rewriting its
# edit.go when EDIT is 1, and appends its wall time (s) and peak RSS (kB)
# to $TMP/NAME.t and $TMP/NAME.m.
edits=0
measure() {
	local name=$1 pkg=$2 edit=$3
	shift 3
	if [ "$edit" = 1 ]; then
		edits=$((edits + 1))
		printf 'package %s\n\n// Edit is changed before each run.\nconst Edit = %d\n' "$pkg" "$edits" >"$MOD/$pkg/edit.go"
	fi
	if ! (cd "$MOD/$pkg" && /usr/bin/time -v -o "$TMP/time.txt" "$@" >/dev/null 2>"$TMP/err.txt"); then
		cat "$TMP/err.txt" "$TMP/time.txt" >&2
		return 1
	fi
	awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$TMP/time.txt" >>"$TMP/$name.t"
	awk -F': ' '/Maximum resident set size/ {print $2}' "$TMP/time.txt" >>"$TMP/$name.m"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# bench PKG EDIT LABEL CG_ARGS -- MOQ_ARGS runs both tools interleaved and
# prints one line.
bench() {
	local pkg=$1 edit=$2 label=$3
	shift 3
	local cgargs=() moqargs=()
	while [ "$1" != "--" ]; do cgargs+=("$1"); shift; done
	shift
	moqargs=("$@")
	: >"$TMP/cg.t"; : >"$TMP/cg.m"; : >"$TMP/moq.t"; : >"$TMP/moq.m"
	for _ in $(seq "$RUNS"); do
		measure cg "$pkg" "$edit" "$CG" "${cgargs[@]}"
		measure moq "$pkg" "$edit" "$MOQ" "${moqargs[@]}"
	done
	local cg_t cg_m mq_t mq_m
	cg_t=$(median <"$TMP/cg.t"); cg_m=$(median <"$TMP/cg.m")
	mq_t=$(median <"$TMP/moq.t"); mq_m=$(median <"$TMP/moq.m")
	printf '%-17s %8.2f %8.1f %8.2f %8.1f %8.2fx %8.2fx\n' "$label" "$cg_t" "$(echo "$cg_m / 1024" | bc -l)" \
		"$mq_t" "$(echo "$mq_m / 1024" | bc -l)" "$(echo "$cg_t / $mq_t" | bc -l)" "$(echo "$cg_m / $mq_m" | bc -l)"
}

printf 'median of %d interleaved runs each; wall in s, peak RSS in MB\n' "$RUNS"
printf '%-17s %8s %8s %8s %8s %9s %9s\n' case cg-wall cg-rss moq-wall moq-rss wall-ratio rss-ratio
for edit in 0 1; do
	what=unchanged
	[ "$edit" = 1 ] && what=edited
	bench big "$edit" "big $what" -- -out big_moq.go . Big
	bench cmds "$edit" "cmds $what" -manifest circuitgen.yaml -- -out cmdable_moq.go . Cmdable
	bench repo "$edit" "repo $what" -- -out repo_moq.go . Repository
	if [ "$S3" = 1 ]; then bench s3 "$edit" "s3 $what" -- -out s3_moq.go . Objects; fi
done

# The first run on a machine: an empty build cache for each tool.
if [ "$S3" = 1 ]; then
	for tool in cg moq; do
		cache=$(mktemp -d)
		args=()
		[ "$tool" = moq ] && args=(-out s3_moq.go . Objects)
		bin=$CG
		[ "$tool" = moq ] && bin=$MOQ
		: >"$TMP/cold.t"; : >"$TMP/cold.m"
		GOCACHE=$cache measure cold s3 1 "$bin" "${args[@]}"
		printf 's3 cold, %-10s wall %.2f s, peak RSS %.1f MB\n' "$tool" "$(cat "$TMP/cold.t")" "$(echo "$(cat "$TMP/cold.m") / 1024" | bc -l)"
		chmod -R u+w "$cache" && rm -rf "$cache"
	done
fi
