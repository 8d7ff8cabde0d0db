// What every backend gives: a program prepared once and run on any inputs of matching dtypes
// and ranks. Every backend validates the same way (uops/ir/binding.h) and raises the same
// uops::Error before writing anything; outputs come back by name.
#pragma once

#include <memory>
#include <string>

#include "uops/ir/program.h"
#include "uops/ir/tensor.h"

namespace uops {

class Executable {
 public:
  virtual ~Executable() = default;
  virtual TensorMap run(const TensorMap& inputs, const ParamMap& params = {}) const = 0;
  virtual std::string backend() const = 0;
  virtual const Program& program() const = 0;
};

}  // namespace uops
