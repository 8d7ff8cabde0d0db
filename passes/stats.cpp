#include "uops/passes/stats.h"

#include "uops/error.h"

namespace uops {

using namespace ir;

ProgramStats program_stats(const Program& p,
                           const std::map<std::string, std::vector<int64_t>>& input_shapes,
                           const ParamMap& params) {
  ProgramStats s;
  s.blocks = int(p.blocks.size());
  for (auto& b : p.blocks) s.loops += int(b.loops.size());
  IndexEnv env;
  env.dim = [&](int t, int axis) -> int64_t {
    const TensorInfo& info = p.tensors[t];
    auto it = input_shapes.find(info.name);
    if (it == input_shapes.end())
      throw Error("stats: no shape given for input '" + info.name + "'");
    if (it->second.size() != info.shape.size())
      throw Error("stats: input '" + info.name + "' has rank " + std::to_string(info.shape.size()) +
                  ", the given shape has " + std::to_string(it->second.size()) + " sizes");
    return it->second[axis];
  };
  env.param = [&](const std::string& name) -> int64_t {
    auto it = params.find(name);
    if (it == params.end()) throw Error("stats: missing parameter '" + name + "'");
    return it->second;
  };
  for (auto& t : p.tensors) {
    if (t.role != Role::temporary) continue;
    ++s.temporaries;
    std::vector<int64_t> shape;
    for (auto& e : t.shape) shape.push_back(evaluate(e, env));
    s.temporary_bytes += element_count(shape) * int64_t(dtype_size(t.dtype));
  }
  return s;
}

}  // namespace uops
