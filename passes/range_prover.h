// Internal to passes/: interval analysis of index expressions inside one block. A bound is an
// affine form over opaque atoms (input axis sizes, parameters, var-free non-affine terms); a
// fact is proven when the difference of two forms is a non-negative constant plus non-negative
// multiples of axis sizes. Unprovable facts are simply not proven.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "uops/ir/program.h"

namespace uops::passes {

using namespace ir;

class RangeProver {
 public:
  // Loop variables get the ranges of `block`'s loops.
  RangeProver(const Program& p, const Block& block);

  // Every component of `index` lies in [0, size) of `tensor`'s axis.
  bool in_range(int tensor, const std::vector<Index>& index) const;
  // Some component of `index` always lies outside `tensor`.
  bool out_of_range(int tensor, const std::vector<Index>& index) const;

 private:
  struct Form {
    bool known = false;
    int64_t c = 0;
    std::map<std::string, int64_t> terms;  // atom key -> coefficient
  };
  struct Bounds {
    Form lo, hi;
  };

  Bounds bounds(const Index& e) const;
  Form atom(const Index& e, bool nonneg) const;
  bool proven_le(const Form& a, const Form& b) const;  // a <= b

  static Form constant(int64_t c);
  static Form plus(const Form& a, const Form& b, int64_t sign);
  static Form scale(const Form& a, int64_t k);

  const Program& p_;
  std::map<int, Bounds> vars_;
  std::map<std::string, Index> defined_;        // atom key of an axis -> a fixed expression
                                                // asserted equal to it (a gradient's d<y> axis)
  std::map<std::string, std::string> alias_;    // atom key -> the key of an axis asserted equal
  mutable std::map<std::string, bool> nonneg_;  // atom key -> known >= 0
};

}  // namespace uops::passes
