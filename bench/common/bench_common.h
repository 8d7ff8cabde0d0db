// What several benchmark programs share: a passive OpenMP wait policy, and random f32 inputs.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <utility>
#include <vector>

#include "uops/ir/tensor.h"

namespace uops::bench {

// libgomp reads its wait policy once, when it loads, before main: unless the caller chose one,
// the program restarts itself (with the same arguments) with a passive policy, as c_backend.h
// advises for shared machines (spinning workers take the core the next run's serial part needs).
// Call it first in main.
inline void restart_with_passive_omp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then the run goes on as it is
}

// An f32 tensor of `shape` drawn uniformly from [-1, 1), the same for the same seed.
inline Tensor random_tensor(std::vector<int64_t> shape, uint64_t seed) {
  Tensor t(DType::f32, std::move(shape));
  std::mt19937 rng{static_cast<uint32_t>(seed)};
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

}  // namespace uops::bench
