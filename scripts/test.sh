#!/usr/bin/env bash
# The test job: install what is missing, then build and run every suite (the Python module's
# pytest suite among them) in Release, again in Release without the CUDA toolkit where the machine
# has one (a user's machine may not, and that build must never break unseen), the whole suite
# again under ASan+UBSan, the runtime's suite under TSan, and the parser fuzzer for
# $UOPS_FUZZ_SECONDS (default 60). Long randomized runs (ctest label "long") are left out; run
# them with `ctest --preset release -L long`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

jobs=$(nproc)
step() { printf '\n== %s ==\n' "$*"; }

step "Format: every C++ file as .clang-format says"
git ls-files '*.cpp' '*.h' | xargs clang-format --dry-run --Werror

step "Release: build and test"
cmake --preset release
cmake --build --preset release -j "$jobs"
# The Python module's pytest suite is the ctest "python_tests" (python/CMakeLists.txt); the module
# is built wherever install-deps.sh ran, so a build without it is a failure here, not a skip.
compgen -G "build/release/python/uops/_uops*.so" > /dev/null ||
  { echo "the Python module was not built: see 'uops: the Python module' in the configure output"; exit 1; }
ctest --preset release -LE long -j "$jobs"

# Where the Release build found no toolkit it already was this configuration.
if grep -q '^UOPS_NVRTC_LIBRARY:FILEPATH=/' build/release/CMakeCache.txt; then
  step "Release without the CUDA toolkit: build and test"
  cmake --preset nocuda
  cmake --build --preset nocuda -j "$jobs"
  ctest --preset nocuda -LE "long|install" -j "$jobs"
fi

step "ASan+UBSan: build and test"
cmake --preset asan
cmake --build --preset asan -j "$jobs"
ctest --preset asan -LE "long|install" -j "$jobs"

step "TSan: the runtime, and compiled programs scheduled on it"
cmake --preset tsan
cmake --build --preset tsan -j "$jobs"
ctest --preset tsan -j "$jobs"

step "Parser fuzzer"
bash tests/fuzz/run_parser_fuzzer.sh "${UOPS_FUZZ_SECONDS:-60}"
