// Registers per machine (targets/machine_registers.h), the aarch64 system call translation
// (diagnosis/syscalls.h), and an aarch64 core of the corpus (Debian 12's arm64 python3.11 under
// qemu) as CoreFile and CoreTarget read it.
#include "targets/machine_registers.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "diagnosis/syscalls.h"
#include "targets/core_file.h"
#include "targets/core_target.h"

namespace hangpy::targets {
namespace {

using cpython::Machine;

TEST(MachineRegisters, NoteSizesOfBothMachines) {
  EXPECT_EQ(MachineRegisters::prstatus_size(Machine::kX86_64), 336u);  // the kernel's x86-64 elf_prstatus
  EXPECT_EQ(MachineRegisters::prstatus_size(Machine::kAarch64), 392u);  // qemu's and the kernel's 0x188
}

TEST(MachineRegisters, Aarch64ThreadInACall) {
  MachineRegisters registers;
  registers.machine = Machine::kAarch64;
  registers.words[0] = 0xbbedc0;  // x0: the futex
  registers.words[1] = 0x189;
  registers.words[8] = 98;  // x8: futex in the generic table
  registers.words[31] = 0x7ff0;
  registers.words[32] = 0x400838;
  const cpython::NativeThread in_call = registers.native_thread(7, true);
  EXPECT_EQ(in_call.syscall, 98);
  EXPECT_EQ(in_call.machine, Machine::kAarch64);
  EXPECT_EQ(in_call.syscall_arguments[0], 0xbbedc0u);
  EXPECT_FALSE(in_call.syscall_arguments_lost);
  EXPECT_EQ(in_call.sp, 0x7ff0u);
  EXPECT_EQ(in_call.pc, 0x400838u);
  EXPECT_EQ(in_call.fs_base, 0u);  // aarch64's pthread_t is found by its LWP instead
  EXPECT_EQ(registers.native_thread(7, false).syscall, -1);
  // x0 = -EINTR: the call ended; its first argument is gone, and said to be.
  registers.words[0] = static_cast<uint64_t>(-4);
  const cpython::NativeThread ended = registers.native_thread(7, true);
  EXPECT_EQ(ended.syscall, 98);
  EXPECT_TRUE(ended.syscall_arguments_lost);
  EXPECT_EQ(ended.syscall_arguments[0], 0u);
}

TEST(MachineRegisters, DwarfOrderOfEachMachine) {
  MachineRegisters x86;
  for (size_t i = 0; i < 27; ++i) x86.words[i] = 100 + i;
  const auto dwarf = x86.dwarf();
  EXPECT_EQ(dwarf[0], 110u);  // rax
  EXPECT_EQ(dwarf[7], 119u);  // rsp
  EXPECT_EQ(dwarf[16], 116u);  // rip
  EXPECT_EQ(x86.pthread_self(), 121u);  // fs_base
  MachineRegisters arm;
  arm.machine = Machine::kAarch64;
  for (size_t i = 0; i < 34; ++i) arm.words[i] = 200 + i;
  const auto arm_dwarf = arm.dwarf();
  EXPECT_EQ(arm_dwarf[30], 230u);  // x30, the link register
  EXPECT_EQ(arm_dwarf[31], 231u);  // sp
  EXPECT_EQ(arm_dwarf[32], 232u);  // pc
}

TEST(MachineRegisters, SvcRecognized) {
  const std::array<std::byte, 4> svc = {std::byte{0x01}, std::byte{0x00}, std::byte{0x00}, std::byte{0xd4}};
  const std::array<std::byte, 4> nop = {std::byte{0x1f}, std::byte{0x20}, std::byte{0x03}, std::byte{0xd5}};
  EXPECT_TRUE(is_aarch64_svc(svc));
  EXPECT_FALSE(is_aarch64_svc(nop));
}

TEST(Aarch64Syscalls, TranslatedByName) {
  EXPECT_EQ(diagnosis::x86_64_syscall(Machine::kAarch64, 98), SYS_futex);
  EXPECT_EQ(diagnosis::x86_64_syscall(Machine::kAarch64, 22), SYS_epoll_pwait);
  EXPECT_EQ(diagnosis::x86_64_syscall(Machine::kAarch64, 63), SYS_read);
  EXPECT_EQ(diagnosis::x86_64_syscall(Machine::kAarch64, 260), SYS_wait4);
  EXPECT_EQ(diagnosis::x86_64_syscall(Machine::kAarch64, 25), SYS_fcntl);  // __NR3264_fcntl
  EXPECT_EQ(diagnosis::x86_64_syscall(Machine::kAarch64, -1), -1);
  EXPECT_EQ(diagnosis::x86_64_syscall(Machine::kAarch64, 100000), -1);
  EXPECT_EQ(diagnosis::x86_64_syscall(Machine::kX86_64, SYS_futex), SYS_futex);
}

// The corpus's aarch64 deadlock: an AArch64 core with a thread per NT_PRSTATUS, each in futex().
class Aarch64Snapshot : public ::testing::Test {
 protected:
  void SetUp() override {
    auto source = std::filesystem::path(HANGPY_TEST_DATA_DIR) / ".." / "corpus" / "arm64-3.11" /
                  "deadlock.core.zst";
    if (!std::filesystem::exists(source)) GTEST_SKIP() << "no aarch64 snapshot in the corpus";
    core_ = std::filesystem::temp_directory_path() / ("hangpy-test-a64-" + std::to_string(getpid()) + ".core");
    std::string command = "zstd -q -d -f '" + source.string() + "' -o '" + core_.string() + "'";
    if (std::system(command.c_str()) != 0) GTEST_SKIP() << "zstd failed";
  }
  void TearDown() override {
    if (!core_.empty()) std::filesystem::remove(core_);
  }
  std::filesystem::path core_;
};

TEST_F(Aarch64Snapshot, ThreadsAndTheirCalls) {
  auto core = CoreFile::open(core_.string());
  ASSERT_TRUE(core) << core.error().describe();
  EXPECT_EQ((*core)->machine(), Machine::kAarch64);
  ASSERT_EQ((*core)->threads().size(), 3u);
  CoreOptions options;
  options.core_path = core_.string();
  auto target = CoreTarget::open(options);
  ASSERT_TRUE(target) << target.error().describe();
  for (const cpython::NativeThread& thread : (*target)->threads()) {
    EXPECT_EQ(thread.machine, Machine::kAarch64);
    EXPECT_EQ(thread.syscall, 98) << "LWP " << thread.lwp;  // futex, told by the svc before the pc
    EXPECT_NE(thread.sp, 0u);
  }
}

}  // namespace
}  // namespace hangpy::targets
