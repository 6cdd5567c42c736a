// Module recovery for a core without NT_FILE (targets/module_recovery.h): ELF headers at the
// start of segments, named through r_debug's link_map and the auxv's AT_EXECFN, over a synthetic
// image of those structures (the real cores are tests/integration/test_truncated.py's).
#include <elf.h>
#include <link.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "targets/module_recovery.h"
#include "memory_image.h"

namespace hangpy::targets {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kExe = 0x555500000000;
constexpr uint64_t kLib = 0x7f0000000000;
constexpr uint64_t kDebug = 0x555500100000;   // r_debug and link_map entries
constexpr uint64_t kStack = 0x7ffff0000000;
constexpr uint64_t kStackSize = 0x4000;

// An ELF header with a read-only PT_LOAD at offset 0, a writable one holding PT_DYNAMIC at
// link-time 0x3e10 (file offset 0x2e10), and PT_INTERP for the executable.
void put_elf(test_support::MemoryImage& memory, uint64_t base, bool executable) {
  memory.map(base, kPage);
  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_type = ET_DYN;
  header.e_phoff = sizeof(Elf64_Ehdr);
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = executable ? 4 : 3;
  memory.put(base, header);
  Elf64_Phdr text{PT_LOAD, PF_R | PF_X, 0, 0, 0, 0x1800, 0x1800, kPage};
  Elf64_Phdr data{PT_LOAD, PF_R | PF_W, 0x2e10, 0x3e10, 0x3e10, 0x300, 0x1000, kPage};
  Elf64_Phdr dynamic{PT_DYNAMIC, PF_R | PF_W, 0x2e10, 0x3e10, 0x3e10, 0x40, 0x40, 8};
  Elf64_Phdr interp{PT_INTERP, PF_R, 0x200, 0x200, 0x200, 28, 28, 1};
  memory.put(base + sizeof(Elf64_Ehdr), text);
  memory.put(base + sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), data);
  memory.put(base + sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr), dynamic);
  if (executable) memory.put(base + sizeof(Elf64_Ehdr) + 3 * sizeof(Elf64_Phdr), interp);
  memory.map(base + 0x3000, kPage);
}

void put_dynamic(test_support::MemoryImage& memory, uint64_t base, uint64_t debug) {
  memory.put(base + 0x3e10, Elf64_Dyn{DT_DEBUG, {debug}});
  memory.put(base + 0x3e20, Elf64_Dyn{DT_NULL, {0}});
}

void put_link_map_entry(test_support::MemoryImage& memory, uint64_t entry, uint64_t name,
                        uint64_t ld, uint64_t next) {
  memory.put(entry + offsetof(link_map, l_name), name);
  memory.put(entry + offsetof(link_map, l_ld), ld);
  memory.put(entry + offsetof(link_map, l_next), next);
}

// An executable and one library as the dynamic linker lists them (with the vDSO between them, as
// glibc has it), and the main stack's auxv naming the executable.
class ModuleRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    put_elf(memory, kExe, true);
    put_elf(memory, kLib, false);
    put_dynamic(memory, kExe, kDebug);
    memory.map(kDebug, kPage);
    memory.put(kDebug + offsetof(r_debug, r_map), kDebug + 0x100);
    put_link_map_entry(memory, kDebug + 0x100, kDebug + 0x800, kExe + 0x3e10, kDebug + 0x200);
    put_link_map_entry(memory, kDebug + 0x200, kDebug + 0x810, 0x7fff00000000, kDebug + 0x300);
    put_link_map_entry(memory, kDebug + 0x300, kDebug + 0x830, kLib + 0x3e10, 0);
    memory.put_string(kDebug + 0x800, "");
    memory.put_string(kDebug + 0x810, "linux-vdso.so.1");
    memory.put_string(kDebug + 0x830, "/opt/python/lib/libpython3.12.so.1.0");
    memory.map(kStack, kStackSize);
    const uint64_t execfn = kStack + kStackSize - 0x40;
    memory.put_string(execfn, "/opt/python/bin/python3.12");
    const std::array<uint64_t, 13> auxv = {0 /* envp's end */, AT_PAGESZ, kPage, AT_PHDR, kExe + 0x40, AT_PHENT,
                             sizeof(Elf64_Phdr), AT_PHNUM, 4, AT_EXECFN, execfn, AT_NULL, 0};
    memory.put(kStack + kStackSize - 0x200, auxv);
    segments = {{kLib, 0x1000, false}, {kLib + 0x3000, 0x1000, true},
                {kExe, 0x1000, false}, {kExe + 0x3000, 0x1000, true},
                {kDebug, kPage, true},  {kStack, kStackSize, true}};
  }

  test_support::MemoryImage memory;
  std::vector<SegmentStart> segments;
};

TEST_F(ModuleRecoveryTest, NamesTheExecutableByExecfnAndLibrariesByTheLinkMap) {
  const RecoveredModules found = recover_modules(memory, segments, std::nullopt, std::nullopt, kPage);
  EXPECT_EQ(found.elf_headers, 2u);
  EXPECT_EQ(found.named, 2u);
  EXPECT_EQ(found.executable_start, kExe);
  EXPECT_EQ(found.executable_named_by, "AT_EXECFN");
  ASSERT_EQ(found.mappings.size(), 4u);
  // As NT_FILE lists them: page-aligned, the writable part up to the end of its file bytes.
  EXPECT_EQ(found.mappings[0].path, "/opt/python/bin/python3.12");
  EXPECT_EQ(found.mappings[0].start, kExe);
  EXPECT_EQ(found.mappings[0].end, kExe + 0x2000);
  EXPECT_EQ(found.mappings[0].file_offset, 0u);
  EXPECT_EQ(found.mappings[1].start, kExe + 0x3000);
  EXPECT_EQ(found.mappings[1].end, kExe + 0x5000);  // 0x3e10 + 0x300 ends in the next page
  EXPECT_EQ(found.mappings[1].file_offset, 0x2000u);
  EXPECT_EQ(found.mappings[2].path, "/opt/python/lib/libpython3.12.so.1.0");
  EXPECT_EQ(found.mappings[2].start, kLib);
}

TEST_F(ModuleRecoveryTest, ExeOptionWinsOverExecfn) {
  const RecoveredModules found = recover_modules(memory, segments, "/elsewhere/python", "/hint/python", kPage);
  EXPECT_EQ(found.executable_named_by, "--exe");
  ASSERT_FALSE(found.mappings.empty());
  EXPECT_EQ(found.mappings[0].path, "/elsewhere/python");
}

TEST_F(ModuleRecoveryTest, WithoutTheStackTheExecutableIsFoundButNotNamed) {
  segments.pop_back();  // the stack: cut off
  const RecoveredModules found = recover_modules(memory, segments, std::nullopt, std::nullopt, kPage);
  EXPECT_EQ(found.executable_start, kExe);  // the link map's first entry
  EXPECT_EQ(found.executable_named_by, "");
  EXPECT_EQ(found.named, 1u);
  ASSERT_EQ(found.mappings.size(), 2u);
  EXPECT_EQ(found.mappings[0].path, "/opt/python/lib/libpython3.12.so.1.0");
}

TEST_F(ModuleRecoveryTest, AWrapperHintNamesTheExecutableOnlyWithoutExecfn) {
  RecoveredModules found = recover_modules(memory, segments, std::nullopt, "/hint/python", kPage);
  EXPECT_EQ(found.executable_named_by, "AT_EXECFN");
  segments.pop_back();  // the stack, and with it AT_EXECFN
  found = recover_modules(memory, segments, std::nullopt, "/hint/python", kPage);
  EXPECT_EQ(found.executable_named_by, "the path its wrapper recorded");
  ASSERT_FALSE(found.mappings.empty());
  EXPECT_EQ(found.mappings[0].path, "/hint/python");
}

TEST_F(ModuleRecoveryTest, ALinkMapCycleEnds) {
  put_link_map_entry(memory, kDebug + 0x300, kDebug + 0x830, kLib + 0x3e10, kDebug + 0x100);
  const RecoveredModules found = recover_modules(memory, segments, std::nullopt, std::nullopt, kPage);
  EXPECT_EQ(found.named, 2u);
}

TEST_F(ModuleRecoveryTest, ImplausibleHeadersAreNoModules) {
  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_type = ET_DYN;
  header.e_phoff = sizeof(Elf64_Ehdr);
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = 60000;  // beyond any real file
  memory.put(kLib, header);
  const RecoveredModules found = recover_modules(memory, segments, std::nullopt, std::nullopt, kPage);
  EXPECT_EQ(found.elf_headers, 1u);
  EXPECT_EQ(found.named, 1u);
}

}  // namespace
}  // namespace hangpy::targets
