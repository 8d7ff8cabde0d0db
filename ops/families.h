// The op families that make up the registry, each in its own file, appended in the order of
// docs/design.md §4's table; plus the helpers several families share.
#pragma once

#include <string>
#include <vector>

#include "uops/ops/registry.h"

namespace uops::ops {

void add_elementwise(std::vector<OpDef>& ops);
void add_linear_algebra(std::vector<OpDef>& ops);
void add_convolution(std::vector<OpDef>& ops);
void add_pooling(std::vector<OpDef>& ops);
void add_normalization(std::vector<OpDef>& ops);
void add_reductions(std::vector<OpDef>& ops);
void add_indexing(std::vector<OpDef>& ops);
void add_losses(std::vector<OpDef>& ops);

// col [M,1] repeated along axis 1 to the shape of like [M,N].
inline Node broadcast_rows(Graph& g, Node col, Node like) {
  return g.reindex(col, {"dA0", "dA1"}, {"i0", "0"}, {like});
}

// The reason a parameter is invalid when it is below `min`, else "".
inline std::string below(const ParamMap& params, const std::string& name, int64_t min) {
  auto it = params.find(name);
  if (it == params.end() || it->second >= min) return "";
  return name + " must be at least " + std::to_string(min) + ", not " + std::to_string(it->second);
}

// The first non-empty reason.
inline std::string first_of(std::initializer_list<std::string> reasons) {
  for (auto& r : reasons)
    if (!r.empty()) return r;
  return "";
}

}  // namespace uops::ops
