// Prints the generated source of every op's forward and gradient program (f32 and f64, lowered
// and optimized) and of random programs, each as C (reassociating and not), as C for an OpenMP
// team (worksharing, the wavefront's form) and as CUDA, into one file. Two runs of two versions
// compared byte for byte show that a change to the code generators changed no generated code
// (scripts/codegen-snapshot.sh).
//
//   codegen_snapshot OUT [RANDOM_PROGRAMS]   (default 1000 random programs)
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "backends/c/c_emitter.h"
#include "support/random_graph.h"
#include "uops/backends/c/c_backend.h"
#include "uops/backends/cuda/cuda_backend.h"
#include "uops/error.h"
#include "uops/ir.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"

namespace {

using namespace uops;

void write(std::ostream& out, const std::string& label, const Program& p) {
  CCompileOptions in_order;
  in_order.reassociate = false;
  out << "==== " << label << " / C\n" << emit_c(p);
  out << "==== " << label << " / C in order\n" << emit_c(p, in_order);
  out << "==== " << label << " / C worksharing\n"
      << cgen::emit_c_unit({&p}, {"uops_kernel"}, {true, true});
  out << "==== " << label << " / CUDA\n" << emit_cuda(p);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: codegen_snapshot OUT [RANDOM_PROGRAMS]\n";
    return 2;
  }
  const int randoms = argc == 3 ? std::atoi(argv[2]) : 1000;
  std::ofstream out(argv[1], std::ios::binary);
  if (!out) {
    std::cerr << "codegen_snapshot: cannot write " << argv[1] << "\n";
    return 2;
  }
  try {
    for (const OpDef& op : all_ops())
      for (DType dt : {DType::f32, DType::f64}) {
        Program fwd = forward_program(op, dt), grad = gradient_program(op, dt);
        std::string suffix = std::string(" ") + dtype_name(dt);
        write(out, op.name + suffix + " lowered", fwd);
        write(out, op.name + suffix + " optimized", optimize(fwd));
        write(out, op.name + " grad" + suffix + " lowered", grad);
        write(out, op.name + " grad" + suffix + " optimized", optimize(grad));
      }
    // The options of the C differential fuzzer (tests/backends/c_differential_test.cpp).
    for (int seed = 0; seed < randoms; ++seed) {
      RandomGraphOptions o;
      o.dtype = seed % 2 ? DType::f64 : DType::f32;
      o.max_nodes = 4 + seed % 12;
      o.empty_raising = true;
      o.contractions = seed % 4 == 1;
      Program p = lower(random_case(uint64_t(seed), o).graph);
      write(out, "random " + std::to_string(seed) + " lowered", p);
      write(out, "random " + std::to_string(seed) + " optimized", optimize(p));
    }
  } catch (const Error& e) {
    std::cerr << "codegen_snapshot: " << e.what() << "\n";
    return 1;
  }
  return out.good() ? 0 : 1;
}
