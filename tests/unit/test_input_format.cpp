// Input detection by content (inputs/input_format.h): magic bytes and ABRT's layout.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "inputs/input_format.h"

namespace hangpy::inputs {
namespace {

InputFormat format_of(std::vector<unsigned> bytes) {
  std::vector<std::byte> head;
  for (unsigned byte : bytes) head.push_back(std::byte(byte));
  return format_of_file_start(head);
}

InputFormat format_of(std::string_view text) {
  return format_of_file_start(std::as_bytes(std::span(text.data(), text.size())));
}

TEST(InputFormat, TellsCompressedFormatsByMagic) {
  EXPECT_EQ(format_of({0x7f, 'E', 'L', 'F', 2, 1, 1}), InputFormat::kElf);
  EXPECT_EQ(format_of({0x28, 0xb5, 0x2f, 0xfd, 0x24}), InputFormat::kZstd);
  EXPECT_EQ(format_of({0x04, 0x22, 0x4d, 0x18, 0x64}), InputFormat::kLz4);
  EXPECT_EQ(format_of({0xfd, '7', 'z', 'X', 'Z', 0x00, 0x00}), InputFormat::kXz);
  EXPECT_EQ(format_of({0x1f, 0x8b, 0x08, 0x08}), InputFormat::kGzip);
  EXPECT_EQ(format_of({0x78, 0x9c, 0x01}), InputFormat::kGzip);  // zlib, default level
  EXPECT_EQ(format_of({0x78, 0x01}), InputFormat::kGzip);        // zlib, fastest
}

TEST(InputFormat, ShortOrForeignStartsAreUnknown) {
  EXPECT_EQ(format_of(std::vector<unsigned>{}), InputFormat::kUnknown);
  EXPECT_EQ(format_of({0x7f, 'E', 'L'}), InputFormat::kUnknown);        // cut ELF magic
  EXPECT_EQ(format_of({0x28, 0xb5, 0x2f}), InputFormat::kUnknown);      // cut zstd magic
  EXPECT_EQ(format_of({0xfd, '7', 'z', 'X', 'Z'}), InputFormat::kUnknown);
  EXPECT_EQ(format_of({0x78, 0x9d}), InputFormat::kUnknown);            // zlib check bits wrong
  EXPECT_EQ(format_of({0x00, 0x00, 0x00, 0x00}), InputFormat::kUnknown);
  EXPECT_EQ(format_of("this is not an ELF file\n"), InputFormat::kUnknown);
}

TEST(InputFormat, TellsApportReportsByTheirFirstField) {
  EXPECT_EQ(format_of("ProblemType: Crash\nDate: Mon Nov 23 10:00:00 2026\n"),
            InputFormat::kApportReport);
  EXPECT_EQ(format_of("ProblemType:Crash\n"), InputFormat::kApportReport);
  EXPECT_EQ(format_of("ExecutablePath: /usr/bin/python3.11\n"), InputFormat::kApportReport);
  EXPECT_EQ(format_of("ProcMaps:\n 00400000-00401000 r--p"), InputFormat::kApportReport);
  EXPECT_EQ(format_of("not a field: value\n"), InputFormat::kUnknown);  // space in the name
  EXPECT_EQ(format_of(": value\n"), InputFormat::kUnknown);
  EXPECT_EQ(format_of(std::string_view("Name: v\0\0", 9)), InputFormat::kUnknown);  // binary
}

TEST(InputFormat, TellsAbrtDirectoriesByTheirItems) {
  auto has = [](std::set<std::string> files) {
    return [files](const char* name) { return files.contains(name); };
  };
  EXPECT_TRUE(is_abrt_layout(has({"coredump", "executable", "cmdline", "time", "pid", "maps"})));
  EXPECT_TRUE(is_abrt_layout(has({"coredump", "cmdline", "analyzer"})));
  // Without its coredump it is still ABRT's: the reader names what is missing.
  EXPECT_TRUE(is_abrt_layout(has({"executable", "pid", "time"})));
  EXPECT_FALSE(is_abrt_layout(has({"coredump"})));
  EXPECT_FALSE(is_abrt_layout(has({"executable", "README"})));
  EXPECT_FALSE(is_abrt_layout(has({})));
}

}  // namespace
}  // namespace hangpy::inputs
