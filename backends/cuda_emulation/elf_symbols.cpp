#include "backends/cuda_emulation/elf_symbols.h"

#include <elf.h>

#include <cstring>

#include "uops/error.h"

namespace uops::cuda_emulation {

namespace {

template <class T>
T read_at(const std::string& bytes, uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
    throw Error("CUDA emulation: a compiled module's ELF data is cut short");
  T out;
  std::memcpy(&out, bytes.data() + offset, sizeof out);
  return out;
}

}  // namespace

std::vector<ElfSymbol> elf_symbols(const std::string& bytes) {
  auto header = read_at<Elf64_Ehdr>(bytes, 0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
    throw Error("CUDA emulation: a compiled module is not a 64-bit ELF file");
  std::vector<Elf64_Shdr> sections;
  for (uint16_t i = 0; i < header.e_shnum; ++i)
    sections.push_back(
        read_at<Elf64_Shdr>(bytes, header.e_shoff + uint64_t(i) * sizeof(Elf64_Shdr)));
  std::vector<ElfSymbol> out;
  for (const Elf64_Shdr& table : sections) {
    if (table.sh_type != SHT_SYMTAB && table.sh_type != SHT_DYNSYM) continue;
    if (table.sh_link >= sections.size())
      throw Error("CUDA emulation: a compiled module's symbol table has no string table");
    const Elf64_Shdr& strings = sections[table.sh_link];
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= table.sh_size; at += sizeof(Elf64_Sym)) {
      auto sym = read_at<Elf64_Sym>(bytes, table.sh_offset + at);
      if (sym.st_name >= strings.sh_size) continue;
      uint64_t start = strings.sh_offset + sym.st_name;
      if (start >= bytes.size()) continue;
      size_t end = bytes.find('\0', start);
      if (end == std::string::npos || end >= strings.sh_offset + strings.sh_size) continue;
      ElfSymbol s;
      s.name = bytes.substr(start, end - start);
      s.value = sym.st_value;
      s.size = sym.st_size;
      s.defined = sym.st_shndx != SHN_UNDEF;
      s.tls = ELF64_ST_TYPE(sym.st_info) == STT_TLS;
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace uops::cuda_emulation
