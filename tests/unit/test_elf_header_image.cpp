// read_plain_header_image against ElfFile (libelf) on the first bytes of this machine's binaries,
// as a core saves them: cut at several lengths, and damaged at random. Wherever the plain reader
// answers, libelf must read the image too and give the same build-id and load segments; and it
// must answer for nearly every real binary's first page, or it saves nothing.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "symbols/elf_file.h"
#include "symbols/elf_header_image.h"

namespace hangpy::symbols {
namespace {

namespace fs = std::filesystem;

// Up to `limit` regular ELF files: the interpreters and the shared libraries of this machine.
std::vector<std::vector<std::byte>> first_bytes_of_binaries(size_t limit) {
  std::vector<std::string> paths = {"/usr/bin/python3.11", "/usr/bin/gdb", "/usr/bin/bash"};
  std::error_code error;
  for (const char* directory : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                "/usr/lib/python3/dist-packages/torch/lib"}) {
    for (const auto& entry : fs::directory_iterator(directory, error)) {
      if (entry.path().string().find(".so") != std::string::npos) paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin() + 3, paths.end());
  std::vector<std::vector<std::byte>> images;
  for (const std::string& path : paths) {
    if (images.size() >= limit) break;
    if (!fs::is_regular_file(path, error)) continue;
    std::ifstream in(path, std::ios::binary);
    std::vector<std::byte> bytes(64 * 1024);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    bytes.resize(static_cast<size_t>(in.gcount()));
    if (bytes.size() >= 4 && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0) images.push_back(std::move(bytes));
  }
  return images;
}

// Whether the plain reader answered; where it did, that it agrees with libelf.
bool answered_as_libelf(std::span<const std::byte> image) {
  const std::optional<HeaderImageFacts> plain = read_plain_header_image(image);
  if (!plain) return false;
  std::vector<std::byte> copy(image.begin(), image.end());
  auto elf = ElfFile::from_borrowed_image(copy, "image");
  EXPECT_TRUE(elf.has_value()) << "the plain reader read an image libelf refuses";
  if (!elf) return true;
  EXPECT_EQ(plain->build_id, (*elf)->build_id());
  const auto& loads = (*elf)->load_segments();
  EXPECT_EQ(plain->load_segments.size(), loads.size());
  for (size_t i = 0; i < std::min(loads.size(), plain->load_segments.size()); ++i) {
    const LoadSegment& a = plain->load_segments[i];
    const LoadSegment& b = loads[i];
    EXPECT_EQ(a.vaddr, b.vaddr);
    EXPECT_EQ(a.memsz, b.memsz);
    EXPECT_EQ(a.file_offset, b.file_offset);
    EXPECT_EQ(a.filesz, b.filesz);
    EXPECT_EQ(a.flags, b.flags);
  }
  return true;
}

TEST(ElfHeaderImage, FirstBytesOfRealBinariesReadAsLibelfReadsThem) {
  const auto binaries = first_bytes_of_binaries(400);
  if (binaries.size() < 20) GTEST_SKIP() << "fewer than 20 ELF binaries found on this machine";
  size_t pages_answered = 0;
  size_t build_ids = 0;
  for (const auto& bytes : binaries) {
    for (size_t length : {size_t{16}, size_t{64}, size_t{100}, size_t{512}, size_t{1024}, size_t{4096}, bytes.size()}) {
      const auto image = std::span(bytes).first(std::min(length, bytes.size()));
      const bool answered = answered_as_libelf(image);
      if (length == 4096 && answered) {
        ++pages_answered;
        if (read_plain_header_image(image)->build_id) ++build_ids;
      }
    }
  }
  // Debian's binaries all have their headers and build-id in the first page.
  EXPECT_GE(pages_answered * 10, binaries.size() * 9) << pages_answered << " of " << binaries.size();
  EXPECT_GE(build_ids * 10, binaries.size() * 9) << build_ids << " of " << binaries.size();
}

TEST(ElfHeaderImage, DamagedHeadersAreReadAsLibelfReadsThemOrLeftToIt) {
  const auto binaries = first_bytes_of_binaries(60);
  if (binaries.empty()) GTEST_SKIP() << "no ELF binaries found on this machine";
  std::mt19937 random(38);
  size_t answered = 0;
  size_t tried = 0;
  for (const auto& bytes : binaries) {
    const size_t length = std::min<size_t>(bytes.size(), 1024);
    for (int round = 0; round < 60; ++round) {
      std::vector<std::byte> image(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(length));
      // A few bytes changed where the reader looks: the ELF header, the program headers, the notes.
      for (int flip = 0; flip < 1 + round % 4; ++flip) {
        const size_t where = random() % std::min<size_t>(image.size(), round % 2 == 0 ? 64 : 1024);
        image[where] = static_cast<std::byte>(random() & 0xff);
      }
      ++tried;
      if (answered_as_libelf(image)) ++answered;
    }
  }
  // Most damage lands where it changes nothing the reader needs: it must still answer then.
  EXPECT_GT(answered, tried / 4) << answered << " of " << tried;
}

}  // namespace
}  // namespace hangpy::symbols
