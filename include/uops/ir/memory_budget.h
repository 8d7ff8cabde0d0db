// The memory budget: how many bytes one run may allocate for its outputs and temporaries.
// Binding a program (uops/ir/binding.h) refuses a run past it with a uops::LimitError.
#pragma once

#include <cstdint>
#include <string>

namespace uops {

// The most bytes one run may allocate for its outputs and temporaries: what set_memory_budget
// gave, else $UOPS_MEMORY_BUDGET (bytes, or with a K, M, G or T suffix), else half the physical
// memory. set_memory_budget(0) restores the default; a malformed variable is a uops::Error.
int64_t memory_budget();
void set_memory_budget(int64_t bytes);
// "8G", "512M", "1000000": bytes, with an optional K, M, G or T suffix; else a uops::Error.
int64_t parse_byte_size(const std::string& text);
// "1.5 GiB"
std::string byte_size_text(int64_t bytes);

}  // namespace uops
