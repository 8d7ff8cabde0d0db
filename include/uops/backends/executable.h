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
  // The same results written into caller-owned tensors: an entry of `outputs` named after a
  // program output with the right dtype and shape is written in place, with no allocation
  // (C backend; the others compute into new tensors and move them in); a missing or mismatched
  // one is replaced. Entries that name no output are left alone. The same validation and
  // errors as run(), before anything is written; after an error the kernel raises while running
  // (division by zero), the outputs' contents are unspecified.
  virtual void run_into(const TensorMap& inputs, TensorMap& outputs,
                        const ParamMap& params = {}) const {
    for (auto& [name, t] : run(inputs, params)) outputs[name] = std::move(t);
  }
  virtual std::string backend() const = 0;
  virtual const Program& program() const = 0;
};

}  // namespace uops
