#!/usr/bin/env bash
# Generated-code snapshot: builds codegen_snapshot in the Release tree and writes the generated C
# and CUDA of every op and of 1,000 random programs to FILE. With a second argument BASELINE,
# compares the two byte for byte (exit 1 and the first differences when they differ).
#
#   scripts/codegen-snapshot.sh /tmp/codegen.base            # on the version before a change
#   scripts/codegen-snapshot.sh /tmp/codegen.new /tmp/codegen.base   # after it
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: codegen-snapshot.sh FILE [BASELINE]}
cmake --build --preset release -j2 --target codegen_snapshot >/dev/null
build/release/tests/snapshot/codegen_snapshot "$out" "${UOPS_SNAPSHOT_RANDOMS:-1000}"
echo "$(grep -c '^==== ' "$out") sources, $(wc -c <"$out") bytes in $out"
if [[ $# -ge 2 ]]; then
  if cmp -s "$out" "$2"; then
    echo "identical to $2"
  else
    diff "$2" "$out" | head -60
    echo "DIFFERS from $2"
    exit 1
  fi
fi
