// How a dialect of C spells what KernelWriter prints, as tinygrad's languages are tables of
// spellings over decided operations. A backend that prints C owns one (backends/c/c_dialect.cpp,
// backends/cuda/cuda_dialect.cpp) and registers it with its name (uops/backends/backends.h); the
// shared writer reads only the table.
#pragma once

namespace uops::codegen {

struct Dialect {
  const char* name;
  const char* inline_function;   // in front of a small helper's definition
  const char* function;          // in front of a larger helper's definition
  const char* restrict_pointer;  // qualifies a pointer that nothing else aliases
  // Atomics, for accumulations that threads share (a dialect without them leaves these null;
  // its backend never asks for atomic accumulation).
  const char* atomic_add;          // f(address, value)
  const char* compare_and_swap;    // f(address, expected, desired), giving the old word
  const char* int_as_float;        // the bits of a 32-bit word as a float
  const char* float_as_int;        // ... and back
  const char* longlong_as_double;  // the bits of a 64-bit word as a double
  const char* double_as_longlong;  // ... and back
  const char* float_math_suffix;   // a float math function's name: the double one's and this
  // The f32 exponential where the dialect defines its own (a helper of helper_definitions),
  // else null: the math library's.
  const char* float_exp;
};

const Dialect& c_dialect();
const Dialect& cuda_dialect();

}  // namespace uops::codegen
