// The part of code generation that C and CUDA share: printing index and value expressions,
// statements and loop nests of the loop-block IR as C, with the exact scalar semantics of
// uops/ir/scalar_semantics.h. The two dialects differ only in spelling (restrict, device
// helpers) and in how a backend wraps the nests (OpenMP pragmas, grid mapping, atomics).
//
// Index arithmetic is int64_t. Floor division and modulo print as plain `/` and `%` when the
// numerator is provably non-negative and the divisor a positive constant, through a helper
// otherwise; a divisor that may be zero goes through a helper that records the error in the
// local `err` (bit 1: division by zero, 2: modulo by zero, 4: overflow) instead of trapping.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/codegen/names.h"
#include "uops/ir/program.h"

namespace uops::codegen {

using namespace ir;

enum class Dialect { c, cuda };

// The error bits a kernel reports, and their messages (the interpreter's words).
enum KernelError { kDivisionByZero = 1, kModuloByZero = 2, kOverflow = 4 };
std::string kernel_error_message(int bits);

class KernelWriter {
 public:
  KernelWriter(const Program& p, Dialect d);

  const Program& program() const { return p_; }
  const Names& names() const { return names_; }
  Dialect dialect() const { return d_; }
  const char* scalar() const;  // the value type: "float" or "double"
  static const char* element_type(DType t);

  // Floating-point x / y prints as x * (1 / y), so a divisor invariant in a loop is divided
  // once (C's reassociating mode: rounding differs in the last bit).
  bool reciprocal_division = false;
  // A loop followed by loops whose innermost ones have constant ranges [0, n) and accumulate, each
  // iteration of those into its own element of one tensor that the loops read nowhere else,
  // keeps those elements in a local array across its iterations: loaded before it, stored after
  // (the register tiles of tile_registers; C only). The same operations in the same order. Loads
  // that check their bounds run unchecked under a test that the whole tile is in range (its
  // corners), checked otherwise: conditional loads keep the compiler from holding the tile in
  // registers.
  bool register_tiles = false;
  // A block whose statements all sit in its innermost loop skips its loops at once when a deeper
  // loop's range is empty (the rows and columns a register tile leaves over, often none), rather
  // than running the loops between to find it out (C only).
  bool guard_empty_loops = false;
  size_t guard_from = 0;  // ... testing it no further out than this loop (inside parallel loops)

  std::string index(const Index& e);
  std::string value(const Value& v);
  // Row-major element offset of `index` in tensor t, and the test that it lies inside.
  std::string offset(int t, const std::vector<Index>& index);
  std::string in_range(int t, const std::vector<Index>& index);
  // The same test, one per axis that needs one.
  std::vector<std::string> axis_tests(int t, const std::vector<Index>& index);

  // Loop k of b written completely (its `for`, carried scalars, inner loops, statements).
  // `before(k)` may add lines (a pragma) in front of any loop's `for`.
  void loop(const Block& b, size_t k, int indent, std::string& out,
            const std::function<void(size_t, int, std::string&)>& before = nullptr,
            const std::set<int>& atomic = {});
  // What a loop runs per iteration, around its inner loop: the carried scalars' declarations
  // and the statements. Accumulations into `atomic` tensors use atomics (CUDA).
  void declare_carried(const Block& b, const Loop& l, int indent, std::string& out);
  void statements(const Block& b, const Loop& l, int indent, std::string& out,
                  const std::set<int>& atomic = {});
  std::string identity(ReduceOp op) const;
  bool carried_is_read(const Block& b, int id) const;

  // Which tensors, sizes and parameters the printed code used, and the helper definitions.
  const std::set<int>& used_tensors() const { return tensors_; }
  const std::set<std::pair<int, int>>& used_sizes() const { return sizes_; }
  const std::set<std::string>& used_params() const { return params_; }
  bool uses_error_flag() const { return uses_err_; }
  void reset_usage();
  const std::set<std::string>& used_helpers() const { return helpers_; }
  // Marks and returns a helper by name (for the backends' own uses).
  std::string helper(const std::string& name);

 private:
  std::string print_index(const Index& e, int min_prec);
  std::string print_value(const Value& v, int min_prec);
  std::string literal(double v) const;
  std::string math(const char* name) const;  // expf or exp
  std::string load(const ValueNode& n);
  bool nonnegative(const Index& e) const;
  bool spans_axis(int t, size_t a, const Index& e) const;
  std::string store(const Stmt& s, bool atomic);
  size_t tile_loop(const Block& b, size_t k) const;
  std::string tile_guard(const Block& b, size_t first, std::vector<int>* uses);
  std::pair<size_t, size_t> empty_guard(const Block& b, size_t from) const;

  std::pair<int, std::string> tile_{-1, ""};  // a tile's tensor, and its element's name in it
  size_t tile_first_ = 0;                     // the first tile loop of the tile being written
  size_t tile_outer_ = 0;                     // the outermost loop the tile is kept across
  bool guarded_ = false;    // its loops are being written under their guard (or its else)
  bool unchecked_ = false;  // ... and its checked loads are known in range
  const Block* empty_block_ = nullptr;     // the block empty_guard_ was decided for
  std::pair<size_t, size_t> empty_guard_;  // test loop .second's range before loop .first
  bool in_guard_ = false;                  // writing the loops under that test

  const Program& p_;
  Dialect d_;
  Names names_;
  bool f64_;
  std::map<int, Index> var_start_, var_end_;
  std::set<int> arg_carried_;
  std::set<int> tensors_;
  std::set<std::pair<int, int>> sizes_;
  std::set<std::string> params_;
  std::set<std::string> helpers_;
  bool uses_err_ = false;
};

// Definitions of the named helpers, in dependency order.
std::string helper_definitions(const std::set<std::string>& names, Dialect d);

// Indentation helper for the emitters.
inline std::string pad(int indent) {
  return std::string(size_t(indent) * 2, ' ');
}

}  // namespace uops::codegen
