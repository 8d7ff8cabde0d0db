// The symbol table of an ELF64 object or shared object, read from its bytes: what the emulation
// needs to find a module's shared arrays and the dynamic shared-memory names its objects leave
// undefined. Every offset is checked against the bytes; malformed input is a uops::Error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uops::cuda_emulation {

struct ElfSymbol {
  std::string name;  // as in the file (mangled)
  uint64_t value = 0, size = 0;
  bool defined = false;  // in a section of this file
  bool tls = false;      // a thread-local object: value is its offset in the TLS segment
};

// Both tables (.symtab and .dynsym) where present; a symbol in both comes twice.
std::vector<ElfSymbol> elf_symbols(const std::string& bytes);

}  // namespace uops::cuda_emulation
