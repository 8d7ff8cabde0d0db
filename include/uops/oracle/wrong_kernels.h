// A catalogue of deliberately wrong implementations, each with one classic kernel bug. The
// harness must catch every one: it is how the oracle proves it has teeth.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "uops/oracle/harness.h"

namespace uops::oracle {

struct WrongKernel {
  std::string name;  // "conv2d_pad_off_by_one"
  std::string op;    // the op it claims to implement
  std::string flaw;  // what is wrong, in words
  std::function<Implementation(DType)> make;
};

const std::vector<WrongKernel>& wrong_kernels();

}  // namespace uops::oracle
