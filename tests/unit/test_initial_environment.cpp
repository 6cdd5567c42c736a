// The initial stack's environment (targets/initial_environment.h), read from this very test
// process: its own stack as the kernel laid it out at exec is the ground truth, and the kernel's
// /proc/self/environ and /proc/self/stat (env_start) say where it is and what it holds.
#include <elf.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "targets/initial_environment.h"

namespace hangpy::targets {
namespace {

// This process's memory, read through process_vm_readv so that an unmapped address is an error.
class OwnMemory final : public cpython::AddressSpace {
 public:
  Expected<void> read(uint64_t address, std::span<std::byte> out) const override {
    iovec local{out.data(), out.size()};
    iovec remote{reinterpret_cast<void*>(address), out.size()};
    const ssize_t done = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (done != static_cast<ssize_t>(out.size()))
      return make_error(ErrorKind::kUnmapped, "unreadable", address);
    return {};
  }
};

std::string file_text(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::pair<uint64_t, uint64_t>> own_auxv() {
  const std::string bytes = file_text("/proc/self/auxv");
  std::vector<std::pair<uint64_t, uint64_t>> auxv;
  for (size_t at = 0; at + 16 <= bytes.size(); at += 16) {
    uint64_t pair[2];
    std::memcpy(pair, bytes.data() + at, sizeof pair);
    if (pair[0] == AT_NULL) break;
    auxv.emplace_back(pair[0], pair[1]);
  }
  return auxv;
}

// Field 50 of /proc/self/stat (proc(5)): where the kernel put the environment strings.
uint64_t own_env_start() {
  const std::string stat = file_text("/proc/self/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // past "pid (comm) "
  std::string field;
  for (int number = 3; fields >> field; ++number)
    if (number == 50) return std::stoull(field);
  return 0;
}

std::vector<std::string> entries_of(const std::string& nul_separated) {
  std::vector<std::string> entries;
  std::istringstream in(nul_separated);
  for (std::string entry; std::getline(in, entry, '\0');)
    if (!entry.empty()) entries.push_back(entry);
  return entries;
}

TEST(InitialEnvironment, ReadsWhatTheKernelPutOnThisProcessStack) {
  OwnMemory memory;
  const auto auxv = own_auxv();
  ASSERT_FALSE(auxv.empty());
  auto all = read_initial_environment(memory, auxv, [](std::string_view) { return true; });
  ASSERT_TRUE(all.has_value()) << all.error().message;
  EXPECT_EQ(*all, entries_of(file_text("/proc/self/environ")));
  ASSERT_FALSE(all->empty()) << "ctest runs this with an environment";

  const std::string first_name = all->front().substr(0, all->front().find('='));
  auto one = read_initial_environment(memory, auxv,
                                      [&](std::string_view name) { return name == first_name; });
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(*one, std::vector<std::string>{all->front()});
}

TEST(InitialEnvironment, StringsRangeIsTheKernelsEnvironmentUpToExecfn) {
  OwnMemory memory;
  const auto auxv = own_auxv();
  auto range = initial_environment_strings(memory, auxv);
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->first, own_env_start());
  uint64_t execfn = 0;
  for (const auto& [key, value] : auxv)
    if (key == AT_EXECFN) execfn = value;
  EXPECT_EQ(range->second, execfn);
  // Every byte of /proc/self/environ lies inside it.
  EXPECT_EQ(range->second - range->first, file_text("/proc/self/environ").size());
}

TEST(InitialEnvironment, NothingWithoutAnAuxv) {
  OwnMemory memory;
  EXPECT_FALSE(initial_environment_strings(memory, {}).has_value());
  EXPECT_FALSE(read_initial_environment(memory, {}, [](std::string_view) { return true; }).has_value());
}

}  // namespace
}  // namespace hangpy::targets
