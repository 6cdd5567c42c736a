// The load segments and build-id of a module, read off the first bytes of its mapping that a core
// saved (ELF header, program headers, note segments), for the plain case only: a 64-bit
// little-endian executable or shared object whose program headers and note segments lie whole in
// the image and whose notes are well formed. Anything else is left to ElfFile (libelf), which
// gives the same answer on the plain case (tests/unit/test_elf_header_image.cpp holds both to it
// on this machine's binaries, cut and damaged).
//
// Why not libelf itself: a torch rank maps ~300 modules, and an Elf descriptor per header (its
// allocations, program header and note conversions, the build-id's ElfNote copies) cost ~4,000
// instructions each, a tenth of a DDP rank's default run, for three facts at fixed offsets.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "symbols/elf_file.h"

namespace hangpy::symbols {

struct HeaderImageFacts {
  std::optional<std::string> build_id;  // lowercase hex of NT_GNU_BUILD_ID, as ElfFile::build_id
  std::vector<LoadSegment> load_segments;  // every PT_LOAD, as ElfFile::load_segments
};

// The facts, or nullopt where the image is not the plain case (then ElfFile decides).
std::optional<HeaderImageFacts> read_plain_header_image(std::span<const std::byte> image);

}  // namespace hangpy::symbols
