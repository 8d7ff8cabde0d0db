// The part of code generation that C and CUDA share: printing index and value expressions,
// statements and loop nests of the loop-block IR as C, with the exact scalar semantics of
// uops/ir/scalar_semantics.h. The two dialects differ only in spelling (restrict, device
// helpers) and in how a backend wraps the nests (OpenMP pragmas, grid mapping, atomics).
//
// Index arithmetic is int64_t. Floor division and modulo print as plain `/` and `%` when the
// numerator is provably non-negative (the range analysis, ir/range_prover.h) and the divisor a
// positive constant, through a helper otherwise; a divisor that may be zero goes through a helper
// that records the error in the local `err` (bit 1: division by zero, 2: modulo by zero, 4:
// overflow) instead of trapping.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/codegen/dialect.h"
#include "backends/codegen/names.h"
#include "ir/range_prover.h"
#include "uops/ir/analysis.h"
#include "uops/ir/program.h"
#include "uops/passes/register_tiles.h"

namespace uops::codegen {

using namespace ir;

// The rows a tile's panel holds (LoopPlan::tile_panel, backends/c/c_tile_panels.h): 512 rows of
// a tile's 16 f32 lanes are 32 KB, of AVX-512's 64 columns 128 KB, the reduction tiles' length
// (tile_reductions); 256 ran no faster (matmul 512^3 on AVX2, a C driver).
constexpr int64_t kTilePanelRows = 512;
// AVX-512's panels of 64 columns (128 KB) fill where this many tiles at least read one filling
// (24 tiles of 6 rows); fewer read the rows in place, a step apart (fill_panel). The panel pays
// where the rows start off a cache line (matmul 512 x 512 x 520 at one thread 1.43-1.54
// -> 1.31-1.38 ms, 1000^3 10.7-10.9 -> 9.6-9.9, AMD Zen 5, a C driver), not at 512^3 (1.17-1.21
// either way), and the copy lost where few tiles share it: 128^3 (21 tiles) 0.0198-0.0225 ->
// 0.0205-0.0244 ms with 16 here; unconditional, 6 x 4096 x 512 lost 20%.
constexpr int64_t kTilePanelTiles = 24;

// The error bits a kernel reports, and their messages (the interpreter's words).
enum KernelError { kDivisionByZero = 1, kModuloByZero = 2, kOverflow = 4 };
std::string kernel_error_message(int bits);

// A compare-and-swap loop applying one reduce step of the value type (double when `f64`, else
// float) to an element of type `element`: an accumulation that threads share and the dialect has
// no native atomic for. Printed as atomic_<op>_<dtype>_<value type>.
struct AtomicHelper {
  ReduceOp op;
  DType element;
  bool f64;
  std::string name() const;
  bool operator<(const AtomicHelper& o) const {
    return name() < o.name();
  }  // printed in name order
};

class KernelWriter {
 public:
  KernelWriter(const Program& p, const Dialect& d);

  const Program& program() const { return p_; }
  const Names& names() const { return names_; }
  const Dialect& dialect() const { return d_; }
  const char* scalar() const;  // the value type: "float" or "double"
  // Scalar c is an argmax's or argmin's whose positions are narrow (LoopPlan::narrow_positions).
  bool narrow_position(int c) const {
    auto it = arg_carried_.find(c);
    return it != arg_carried_.end() && it->second;
  }
  // The C type of argmax or argmin scalar c's position: int32_t where narrow, else int64_t.
  const char* position_type(int c) const { return narrow_position(c) ? "int32_t" : "int64_t"; }
  static const char* element_type(DType t);

  // Floating-point x / y prints as x * (1 / y), so a divisor invariant in a loop is divided
  // once (C's reassociating mode: rounding differs in the last bit).
  bool reciprocal_division = false;
  // A streamed tile's stores (LoopPlan::tile_stream) go around the cache where its tensor holds
  // at least this many bytes, a test at run time (CpuTarget::tile_stream_bytes); streamed rows
  // (LoopPlan::stream) where theirs holds kStreamBytes.
  int64_t tile_stream_bytes = kStreamBytes;
  std::string index(const Index& e);
  // The number of elements of tensor t, printed.
  std::string elements(int t);
  std::string value(const Value& v);
  // "  const int64_t k = 2;\n" for a parameter fix_params fixed (uops/ir/fixed_params.h; binding
  // has checked the value given), which the kernel then does not take; "" for any other.
  std::string fixed_param_declaration(const std::string& param);
  // Row-major element offset of `index` in tensor t, and the test that it lies inside.
  std::string offset(int t, const std::vector<Index>& index);
  // Tensor t's size along axis a as printed: a constant, or its size variable (declared).
  std::string axis_size(int t, size_t a);
  std::string in_range(int t, const std::vector<Index>& index);
  // The same test, one per axis that needs one.
  // The test that `e` lies on axis a of tensor t, or "" where a loop spans the axis.
  std::string axis_test(int t, size_t a, const Index& e);
  std::vector<std::string> axis_tests(int t, const std::vector<Index>& index);

  // Loop k of b written completely (its `for`, carried scalars, inner loops, statements), with
  // what the loops' plans say (ir::LoopPlan: register tiles and their corner tests, empty-range
  // tests; the C backend's passes set them). `before(k)` may add lines (a pragma) in front of
  // any loop's `for`.
  using Before = std::function<void(size_t, int, std::string&)>;
  // A loop whose reductions run in lanes the printer writes out (LoopPlan::lanes): loop() writes
  // it so (see lanes()). While `before` is called for the loop's last iterations, which run as
  // usual, not: their pragma reduces the scalars.
  bool runs_in_lanes(const LoopPlan& plan) const { return plan.lanes > 0 && !lanes_left_; }
  // While `before` is called for the copy of a loop over a short range (LoopPlan::narrow_lanes):
  // the lanes its pragma asks for; else 0.
  int lanes_asked(const LoopPlan& plan) const { return narrow_ ? plan.narrow_lanes : 0; }
  // A test in front of the outer loop (k = 0) is the block's: the backend prints empty_test in
  // front of whatever it starts around the block (a team).
  void loop(const Block& b, size_t k, int indent, std::string& out, const Before& before = nullptr,
            const std::set<int>& atomic = {});
  // The condition under which loop l of b runs at all: its plan's tested ranges are not empty
  // (ir::LoopPlan::empty_tests); "" where it tests none.
  std::string empty_test(const Block& b, const Loop& l);
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
  const std::set<AtomicHelper>& used_atomics() const { return atomics_; }
  // The math functions called, as printed ("expf", "pow").
  const std::set<std::string>& used_math() const { return math_; }
  // Marks and returns a helper by name (for the backends' own uses).
  std::string helper(const std::string& name);

 private:
  std::string print_index(const Index& e, int min_prec);
  std::string print_value(const Value& v, int min_prec);
  std::string literal(double v) const;
  void transposed_copy(const Block& b, size_t k, int indent, std::string& out,
                       const Before& before);
  std::string stream_test(int t, int64_t bytes);
  std::string stream_row(int t);
  std::string tile_rows(const Block& b, size_t tile_loops);
  std::string next_rows_prefetch(const Block& b, size_t k, int indent);
  std::string fill_panel(const Block& b, size_t k, int indent);
  std::string panel_row(const ValueNode& n);
  std::string streamed_store(const Block& b, size_t tile_loops, const std::string& tile,
                             int indent);
  std::string math(const char* name);  // expf or exp
  std::string load(const ValueNode& n);
  std::string store(const Stmt& s, bool atomic);
  // `acc` reduced by one step of op with `v` (sum, mean, product, max, min), as a statement.
  std::string reduce_step(ReduceOp op, const std::string& acc, const std::string& v);
  // Where the loop being written sits.
  struct Within {
    bool empty_tested = false;  // under its block's empty-range test
    bool tile = false;          // inside a register tile
    bool tile_tested = false;   // under the tile's corner test, or in its else
    bool end_declared = false;  // this loop's end is in `<var>_end` (declared in front of it)
    bool narrowed = false;      // under the test of a range short enough for fewer lanes
    bool steps_bound = false;   // the tile's rows by steps are bound (LoopPlan::tile_steps)
    bool streamed = false;      // under the test of a tensor large enough to stream its rows
  };
  void nest(const Block& b, size_t k, int indent, std::string& out, const Before& before,
            const std::set<int>& atomic, Within within);
  void lanes(const Block& b, size_t k, int indent, std::string& out, const Before& before,
             const std::set<int>& atomic, const std::string& end);
  void lane_group(const Block& b, size_t k, int indent, std::string& out, const Before& before,
                  const std::set<int>& atomic, Within within, const std::string& end);
  bool bind_row(const Block& b, size_t k, int indent, std::string& out, const Before& before,
                const std::set<int>& atomic, Within within);
  void bind_steps(const Block& b, size_t k, int indent, std::string& out, const Before& before,
                  const std::set<int>& atomic, Within within);

  // What is being written: a register tile's tensor and its element's name in the tile, and
  // whether checked loads are known in range (under a tile's corner test).
  std::pair<int, std::string> tile_{-1, ""};
  std::vector<Index> tile_index_;  // the index the tile's statements store at
  bool unchecked_ = false;
  // In a border tile's else (bind_row): there, the loop its rows are bound in front of, and what
  // each checked row load bound so far reads, its element through the row's pointer or its fill.
  bool border_rows_ = false;
  size_t rows_at_ = 0;
  bool narrow_ = false;      // printing a loop's copy in LoopPlan::narrow_lanes lanes
  bool lanes_left_ = false;  // printing the iterations a loop in lanes leaves over
  std::map<const ValueNode*, std::string> row_of_;
  int rows_declared_ = 0;
  // In a border tile's else: the test's plan, whose tile_steps bind_steps binds.
  const LoopPlan* steps_ = nullptr;
  int steps_declared_ = 0;
  // In a loop run in lanes by hand: the lane's name; the carried scalars live in arrays.
  std::string lane_;
  // Inside a loop in lane groups (lane_group): the loop, and the group's first iteration's name;
  // each loop's statements run for every lane, its carried scalars read from their arrays.
  const Loop* group_ = nullptr;
  std::string group_next_;
  // In a tile in rows of lanes (LoopPlan::tile_width): the current row's vector, and while its
  // statement prints, the innermost loop's variable, along which loads read rows, and its count.
  std::string lanes_, lanes_count_;
  int lanes_var_ = -1;
  bool lanes_whole_ = false;  // the row runs all its lanes (a whole tile's)
  // In a tile with a panel (LoopPlan::tile_panel): the tile's loop, whose rows the buffer
  // `panel_` holds from its start on, each `panel_width_` columns wide (the tile's last loop,
  // `panel_column_`); its loads read them there.
  const Loop* panel_loop_ = nullptr;
  std::string panel_, panel_width_, panel_column_;
  bool panel_step_ = false;  // the tile reads through panel_ + "_at" and "_step" (fill_panel)

  const Program& p_;
  const Dialect& d_;
  Names names_;
  bool f64_;
  LoopRanges ranges_;
  RangeProver prover_;  // when floor division prints as `/`
  // An argmax's or argmin's scalar -> whether its positions are narrow
  // (LoopPlan::narrow_positions).
  std::map<int, bool> arg_carried_;
  std::set<int> tensors_;
  std::set<std::pair<int, int>> sizes_;
  std::set<std::string> params_;
  std::set<std::string> helpers_;
  std::set<AtomicHelper> atomics_;
  std::set<std::string> math_;
  bool uses_err_ = false;
};

// Definitions of the named helpers, in dependency order, then of the atomic ones.
std::string helper_definitions(const std::set<std::string>& names,
                               const std::set<AtomicHelper>& atomics, const Dialect& d);

// The names helper_definitions defines: a tensor never takes one (names.h).
const std::set<std::string>& helper_names();

// Indentation helper for the emitters.
inline std::string pad(int indent) {
  return std::string(size_t(indent) * 2, ' ');
}

}  // namespace uops::codegen
