// FilePages (a large core's memory read through a few reused page buffers) against the file's
// own bytes: a corpus core of a real process read through the buffers (forced, though it is
// small enough to be read through its mapping), 20,000 reads of every size up to past a page and
// past the buffers' direct-read size, at offsets all over the file, its last page and past its
// end among them; each read must give what a plain pread gives, and fail where it fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cpython/analyzer.h"
#include "symbols/elf_file.h"
#include "targets/core_target.h"
#include "targets/file_pages.h"

using namespace hangpy;

namespace {

const std::filesystem::path kPagesCorpus = std::filesystem::path(HANGPY_TEST_DATA_DIR) / ".." / "corpus";

TEST(FilePages, ReadsWhatTheFileHoldsThroughFewBuffers) {
  const std::filesystem::path source = kPagesCorpus / "pyenv-3.11" / "deadlock.core.zst";
  if (!std::filesystem::exists(source)) GTEST_SKIP() << source << " is not in the corpus";
  if (std::system("zstd --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "zstd is not installed";
  const std::filesystem::path core = std::filesystem::temp_directory_path() / ("hangpy-file-pages-" + std::to_string(::getpid()) + ".core");
  const std::string inflate = "zstd -q -d -f '" + source.string() + "' -o '" + core.string() + "'";
  ASSERT_EQ(std::system(inflate.c_str()), 0);
  auto file = symbols::ElfFile::open_by_segments(core.string());
  std::filesystem::remove(core);  // the descriptor keeps it readable
  ASSERT_TRUE(file) << file.error().describe();
  const uint64_t size = (*file)->file_size();
  // More pages than the buffers hold, so that slots are taken back and read anew.
  ASSERT_GT(size, 2 * targets::FilePages::kSlots * targets::FilePages::kPageSize);
  const targets::FilePages pages(**file, /*mapped_up_to=*/0);

  std::mt19937_64 random(38);
  size_t past_end = 0, compared_bytes = 0;
  for (int i = 0; i < 20000; ++i) {
    const size_t length = i % 10 == 0 ? random() % (6 * targets::FilePages::kPageSize) : 1 + random() % 64;
    uint64_t offset;
    switch (i % 4) {
      case 0: offset = size - std::min<uint64_t>(size, random() % (2 * targets::FilePages::kPageSize)); break;
      case 1: offset = (random() % (size / targets::FilePages::kPageSize)) * targets::FilePages::kPageSize - 1 - random() % 8; break;
      default: offset = random() % size; break;
    }
    std::vector<std::byte> through_pages(length, std::byte{0x5a}), plain(length, std::byte{0xa5});
    const auto read = pages.read(offset, through_pages);
    const auto expected = (*file)->read_file_offset_unmapped(offset, plain);
    ASSERT_EQ(read.has_value(), expected.has_value()) << length << " bytes at " << offset << " of " << size;
    if (!expected) {
      ++past_end;
      EXPECT_EQ(read.error().kind, expected.error().kind);
      continue;
    }
    ASSERT_EQ(through_pages, plain) << length << " bytes at " << offset;
    compared_bytes += length;
  }
  EXPECT_GT(past_end, 100u) << "reads past the end were tried";
  EXPECT_GT(compared_bytes, 1000000u);
}

// The whole pipeline through the buffers: the same core padded with zeros past FilePages'
// threshold (its segments unchanged, the file larger) is read through them by CoreTarget, and
// must give every thread's stack as the core read through its mapping does.
TEST(FilePages, APaddedCoreReadsTheSameStacksThroughTheBuffers) {
  const std::filesystem::path source = kPagesCorpus / "pyenv-3.12" / "deadlock.core.zst";
  if (!std::filesystem::exists(source)) GTEST_SKIP() << source << " is not in the corpus";
  if (std::system("zstd --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "zstd is not installed";
  const std::filesystem::path small = std::filesystem::temp_directory_path() / ("hangpy-file-pages-small-" + std::to_string(::getpid()) + ".core");
  const std::filesystem::path padded = std::filesystem::temp_directory_path() / ("hangpy-file-pages-padded-" + std::to_string(::getpid()) + ".core");
  const std::string inflate = "zstd -q -d -f '" + source.string() + "' -o '" + small.string() + "'";
  ASSERT_EQ(std::system(inflate.c_str()), 0);
  std::filesystem::copy_file(small, padded, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(padded, targets::FilePages::kMappedUpTo + (1 << 20));  // a hole
  std::vector<cpython::ProcessStacks> read;
  for (const auto& path : {small, padded}) {
    targets::CoreOptions options;
    options.core_path = path.string();
    auto target = targets::CoreTarget::open(options);
    std::filesystem::remove(path);
    ASSERT_TRUE(target) << target.error().describe();
    auto stacks = cpython::analyze(**target, {});
    ASSERT_TRUE(stacks) << stacks.error().describe();
    read.push_back(std::move(*stacks));
  }
  ASSERT_EQ(read[0].threads.size(), read[1].threads.size());
  ASSERT_GE(read[0].threads.size(), 3u) << "deadlock.py's main thread and two workers";
  size_t frames = 0;
  for (size_t t = 0; t < read[0].threads.size(); ++t) {
    const auto& mapped = read[0].threads[t].frames;
    const auto& paged = read[1].threads[t].frames;
    ASSERT_EQ(mapped.size(), paged.size()) << "thread " << t;
    for (size_t f = 0; f < mapped.size(); ++f, ++frames) {
      EXPECT_EQ(mapped[f].function, paged[f].function);
      EXPECT_EQ(mapped[f].file, paged[f].file);
      EXPECT_EQ(mapped[f].line, paged[f].line);
    }
    EXPECT_EQ(read[0].threads[t].name, read[1].threads[t].name);
  }
  EXPECT_GE(frames, 6u);
}

}  // namespace
