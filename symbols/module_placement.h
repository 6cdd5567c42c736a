// Where a mapped ELF module sits in a process, and in which order its modules are searched for a
// symbol: shared by every target that maps modules (a core, a live process).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "symbols/elf_file.h"

namespace hangpy::symbols {

inline uint64_t align_down(uint64_t value, uint64_t alignment) { return value & ~(alignment - 1); }

// Runtime address minus link-time address: where the segment holding file offset 0 was mapped,
// given the address `header_address` at which file offset 0 is mapped.
std::optional<uint64_t> load_bias_from(const std::vector<LoadSegment>& segments,
                                       uint64_t header_address, uint64_t page_size);

// Indices of `paths` (the modules' recorded paths) in symbol search order: the executable, then
// libpython, then the others in the given order. libpython comes early, as in the dynamic
// linker's own search order (it is a direct dependency of the executable); in address order it
// comes after everything loaded later (mmap goes downwards), and a lookup would open hundreds of
// files of a PyTorch process first.
std::vector<size_t> symbol_search_order(std::span<const std::string_view> paths,
                                        std::optional<size_t> executable);

}  // namespace hangpy::symbols
