#!/usr/bin/env bash
# Installs the Debian packages uops builds with, only those that are missing.
# The CUDA toolkit is optional: with /usr/local/cuda (NVRTC) present the CUDA backend compiles
# kernels; without it that backend reports that NVRTC is not available. PyTorch (python3-torch) is
# optional too: the Python tests that use it skip without it.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang clang-format git ccache
  libssl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libeigen3-dev libcli11-dev nlohmann-json3-dev
  libopenblas-dev libdnnl-dev  # bench_backends peers only (optional in CMake)
  libomp-14-dev libclang-rt-14-dev
  libtbb-dev
  pybind11-dev python3-dev python3-numpy python3-pytest  # the Python module and its tests
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
