// Describe an op with uops (here a row-wise L2 normalization), lower it, print the loop program
// (the IR's printer, uops/ir/printer.h) and run it on the interpreter.
#include <uops/ir/printer.h>
#include <uops/uops.h>

#include <cmath>
#include <cstdio>

int main() {
  using namespace uops;
  Graph g;
  Node x = g.input("x", 2, DType::f64);
  Node norm = g.unary(UnaryOp::sqrt, g.reduce(ReduceOp::sum, {1}, g.binary(BinaryOp::mul, x, x)));
  g.output("y", g.binary(BinaryOp::div, x, g.reindex(norm, {"dA0", "dA1"}, {"i0", "0"}, {x})));
  Program p = lower(g);
  std::printf("%s", ir::print(p).c_str());

  Tensor t(DType::f64, {2, 2});
  for (int i = 0; i < 4; ++i) t.set(i, std::vector<double>{3, 4, 6, 8}[i]);
  Tensor y = interpret(p, {{"x", t}}).at("y");
  std::printf("y = [%g %g; %g %g]\n", y.get(0), y.get(1), y.get(2), y.get(3));
  return y.get(0) == 0.6 && y.get(3) == 0.8 ? 0 : 1;
}
