#include "backends/codegen/dialect.h"

namespace uops::codegen {

const Dialect& c_dialect() {
  static const Dialect d{"c",     "static inline ", "static ", "restrict", nullptr, nullptr,
                         nullptr, nullptr,          nullptr,   nullptr,    "f",     "vector_expf"};
  return d;
}

}  // namespace uops::codegen
