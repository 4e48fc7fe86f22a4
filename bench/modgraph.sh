#!/usr/bin/env bash
# modgraph.sh PKG...: what a new user module that imports PKG (packages of
# this repository) inherits; modgraph.sh -tool PKG: what go get -tool PKG
# adds to one: the requirements go mod tidy writes into its
# go.mod, and the modules of its graph (go list -m all, itself left out).
# circuitgen's modules come from this checkout (replace directives), the
# others through the module proxy. BENCHMARKS.md quotes its figures.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"
{
	printf 'module example.com/user\n\ngo 1.26.0\n\n'
	for dir in $(cd "$repo" && go work edit -json | sed -n 's/.*"DiskPath": "\(.*\)".*/\1/p'); do
		dir=${dir#.}
		echo "require github.com/circuitgen/circuitgen$dir v0.0.0-00010101000000-000000000000"
		echo "replace github.com/circuitgen/circuitgen$dir => $repo$dir"
	done
} >go.mod
if [ "${1:-}" = -tool ]; then
	printf 'package main\n\nfunc main() {}\n' >main.go
	GOWORK=off GOFLAGS=-mod=mod go mod tidy >/dev/null
	GOWORK=off go get -tool "$2@v0.0.0-00010101000000-000000000000" 2>/dev/null
else
	{
		echo "package main"
		echo "import ("
		for p in "$@"; do echo "	_ \"$p\""; done
		echo ")"
		echo "func main() {}"
	} >main.go
	GOWORK=off GOFLAGS=-mod=mod go mod tidy >/dev/null
fi
reqs=$(awk '/^require \(/ {inb=1; next} inb && /^\)/ {inb=0} inb || /^require [^(]/ {n++} END {print n+0}' go.mod)
echo "$reqs go.mod requirements, $(GOWORK=off go list -m all | tail -n +2 | wc -l) modules in the graph: $*"
