#!/bin/sh
# Runs every benchmark of the repository, COUNT times each (default 5),
# into the file named by the first argument (default bench.txt), and
# prints the medians with benchstat when it is installed. The benchmarks
# that alternate with their floor (a bare spawn) report both; see
# docs/performance.md for what each measures.
#
#	scripts/bench.sh [out]
set -eu
out=${1:-bench.txt}
count=${COUNT:-5}
cd "$(dirname "$0")/.."
go test -run '^$' -bench . -count "$count" -timeout 3h ./... | tee "$out"
if command -v benchstat >/dev/null 2>&1; then
	benchstat "$out"
fi
