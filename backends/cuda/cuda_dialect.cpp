#include "backends/codegen/dialect.h"

namespace uops::codegen {

const Dialect& cuda_dialect() {
  static const Dialect d{"cuda",
                         "static __device__ __forceinline__ ",
                         "static __device__ ",
                         "__restrict__",
                         "atomicAdd",
                         "atomicCAS",
                         "__int_as_float",
                         "__float_as_int",
                         "__longlong_as_double",
                         "__double_as_longlong",
                         "f",
                         nullptr};
  return d;
}

}  // namespace uops::codegen
