#!/usr/bin/env bash
# Builds the parser fuzzer with clang in build-fuzz and runs it for the given number of seconds
# (default 60) on a copy of the seed corpus; the seeds themselves stay untouched. Exit status is
# libFuzzer's: non-zero when it found a crash, a sanitizer report or a round-trip mismatch, and
# the reproducer is left in build-fuzz/ as crash-*.
#   tests/fuzz/run_parser_fuzzer.sh 60
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build-fuzz"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DUOPS_BUILD_FUZZ=ON -DUOPS_BUILD_TESTS=OFF -DUOPS_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target parser_fuzzer

corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT
cp "$root"/tests/fuzz/corpus/* "$corpus"/

"$build/tests/fuzz/parser_fuzzer" "$corpus" \
  -dict="$root/tests/fuzz/parser.dict" \
  -max_total_time="$seconds" -max_len=4200 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$build/"
