// The one range analysis of index expressions (not API): interval bounds under the ranges of
// loop variables. A bound is an affine form over opaque atoms (input axis sizes, parameters,
// var-free non-affine terms); a parameter fix_params fixes is its value instead. A fact is proven
// when the difference of two forms is a non-negative constant plus non-negative multiples of
// atoms known to be non-negative. Unprovable facts are simply not proven. The bounds pass and
// variable substitution ask whether accesses lie inside their tensors; the C and CUDA printers
// ask whether a numerator is non-negative (then floor division prints as plain `/`), the C lane
// groups whether an argmax's positions are narrow.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "uops/ir/program.h"

namespace uops::ir {

class RangeProver {
 public:
  // Loop variables get the ranges of `block`'s loops.
  RangeProver(const Program& p, const Block& block);
  // ... of every block's loops; a variable that two loops share gets none.
  explicit RangeProver(const Program& p);

  // `e` is never negative.
  bool nonnegative(const Index& e) const;

  // Every component of `index` lies in [0, size) of `tensor`'s axis.
  bool in_range(int tensor, const std::vector<Index>& index) const;
  // Some component of `index` always lies outside `tensor`.
  bool out_of_range(int tensor, const std::vector<Index>& index) const;
  // Every value of `a` under these ranges lies below every value of `b` under `other`'s.
  bool below(const Index& a, const RangeProver& other, const Index& b) const;

 private:
  struct Form {
    bool known = false;
    int64_t c = 0;
    std::map<std::string, int64_t> terms;  // atom key -> coefficient
  };
  struct Bounds {
    Form lo, hi;
  };

  // e's bounds from its operands'; a var-free e with a side they leave unknown is its own atom.
  Bounds bounds(const Index& e) const;
  Bounds operand_bounds(const Index& e) const;  // the bounds from the operands alone
  Form atom(const Index& e, bool nonneg) const;
  bool proven_le(const Form& a, const Form& b) const;  // a <= b
  void assume_equalities();
  void add_loops(const Block& block, const std::set<int>& unknown);  // vars left unknown

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

}  // namespace uops::ir
