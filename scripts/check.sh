#!/usr/bin/env bash
# The main job: install what is missing, build uopc (Release), and run the randomized oracle
# check of every op. Extra arguments go to `uopc check` (e.g. --backend interp,c --trials 50).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target uopc
./build/release/tools/uopc check "$@"
