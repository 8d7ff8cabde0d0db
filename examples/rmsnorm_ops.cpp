// An op library (docs/op-libraries.md): RMSNorm described with uops and registered through the
// one exported C function uopc looks for. Built as a shared module against uops' headers only:
// the program that loads it (uopc) provides uops itself.
//
//   uopc --ops ./librmsnorm_ops.so check rmsnorm
#include <uops/ops/registry.h>

namespace {

// y = x · rsqrt(mean(x²) + 1e-6) · w over the last axis.
uops::OpDef rmsnorm() {
  using namespace uops;
  OpDef d;
  d.name = "rmsnorm";
  d.inputs = {{"x", 2}, {"w", 1}};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    Node x = g.input("x", 2, t), w = g.input("w", 1, t);
    Node ms = g.reduce(ReduceOp::mean, {1}, g.binary(BinaryOp::mul, x, x));
    Node rstd = g.unary(UnaryOp::rsqrt, g.binary(BinaryOp::add, ms, g.fill(ms, 1e-6)));
    Node rows = g.reindex(rstd, {"dA0", "dA1"}, {"i0", "0"}, {x});
    Node ws = g.reindex(w, {"dA0", "dA1[=dB0]"}, {"i1"}, {x, w});
    g.output("y", g.binary(BinaryOp::mul, g.binary(BinaryOp::mul, x, rows), ws));
    return g;
  };
  d.example_shapes = {{"x", {128, 256}}, {"w", {256}}};
  return d;
}

}  // namespace

extern "C" int uops_register_ops(int abi) {
  if (abi != UOPS_OPS_ABI) return 1;
  uops::register_op(rmsnorm());
  return 0;
}
