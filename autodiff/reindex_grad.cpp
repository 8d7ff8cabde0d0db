// y[i] = x[index(i)]  =>  dx[index(i)] += dy[i]. A fill position indexes outside x, and a store
// outside a tensor does nothing, so fill positions contribute nothing; positions of x that
// several outputs read receive the sum.
#include "rules.h"
#include "uops/error.h"

namespace uops::autodiff {

using namespace ir;

void reindex_grad(GradContext& c, int n) {
  int x = c.node(n).operands[0];
  if (!c.has_grad(x)) return;
  // The index in program form is the one the forward block loads with.
  const Block* forward = nullptr;
  for (auto& b : c.program().blocks)
    for (auto& s : b.loops.back().stmts)
      if (s.kind == StmtKind::assign && s.tensor == c.value_tensor(n)) forward = &b;
  UOPS_ASSERT(forward && forward->loops.back().stmts.size() == 1 &&
                  forward->loops.back().stmts[0].value->kind == ValueKind::Load,
              "no forward block for a reindex");
  std::vector<int> old_vars;
  for (auto& l : forward->loops) old_vars.push_back(l.var);
  std::vector<Index> from = forward->loops.back().stmts[0].value->index;

  Block b;
  std::vector<Index> vars = c.nest(b, c.shape(n));
  UOPS_ASSERT(b.loops.size() == old_vars.size(), "reindex block of another rank");
  std::vector<Index> at;
  for (auto& e : from)
    at.push_back(rewrite(e, [&](const Index& leaf) -> Index {
      if (leaf->kind != IndexKind::Var) return nullptr;
      for (size_t k = 0; k < old_vars.size(); ++k)
        if (leaf->var == old_vars[k]) return idx::var(b.loops[k].var);
      return nullptr;
    }));
  // A scatter: fill positions and strides leave elements of dx unwritten.
  c.contribute(b, x, std::move(at), c.grad(n, vars), false);
  c.emit(std::move(b), "grad of reindex");
}

}  // namespace uops::autodiff
