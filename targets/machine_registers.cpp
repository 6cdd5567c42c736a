#include "targets/machine_registers.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace hangpy::targets {
namespace {

using cpython::Machine;

// Word indexes in pr_reg. x86-64: the kernel's struct user_regs_struct.
constexpr size_t kX86Rip = 16, kX86Rsp = 19, kX86FsBase = 21, kX86OrigRax = 15;
constexpr size_t kX86Rdi = 14, kX86Rsi = 13, kX86Rdx = 12, kX86R10 = 7, kX86R8 = 9, kX86R9 = 8;
// aarch64: struct user_pt_regs { regs[31]; sp; pc; pstate; }.
constexpr size_t kArmX8 = 8, kArmSp = 31, kArmPc = 32;

constexpr size_t kX86Words = 27;
constexpr size_t kArmWords = 34;

}  // namespace

uint16_t elf_machine(Machine machine) { return machine == Machine::kAarch64 ? EM_AARCH64 : EM_X86_64; }

std::optional<Machine> machine_of_elf(uint16_t e_machine) {
  if (e_machine == EM_X86_64) return Machine::kX86_64;
  if (e_machine == EM_AARCH64) return Machine::kAarch64;
  return std::nullopt;
}

size_t MachineRegisters::word_count(Machine machine) {
  return machine == Machine::kAarch64 ? kArmWords : kX86Words;
}

// The header, pr_reg, then pr_fpvalid (an int), padded to 8 bytes.
size_t MachineRegisters::prstatus_size(Machine machine) {
  return sizeof(PrstatusHeader) + word_count(machine) * 8 + 8;
}

uint64_t MachineRegisters::pc() const { return words[machine == Machine::kAarch64 ? kArmPc : kX86Rip]; }
uint64_t MachineRegisters::sp() const { return words[machine == Machine::kAarch64 ? kArmSp : kX86Rsp]; }
void MachineRegisters::set_pc(uint64_t value) { words[machine == Machine::kAarch64 ? kArmPc : kX86Rip] = value; }
void MachineRegisters::set_sp(uint64_t value) { words[machine == Machine::kAarch64 ? kArmSp : kX86Rsp] = value; }

uint64_t MachineRegisters::thread_register() const {
  return machine == Machine::kAarch64 ? arm_tls : words[kX86FsBase];
}

uint64_t MachineRegisters::pthread_self() const {
  return machine == Machine::kAarch64 ? 0 : words[kX86FsBase];
}

void MachineRegisters::set_pthread_self(uint64_t value) {
  if (machine == Machine::kX86_64) words[kX86FsBase] = value;
}

int64_t MachineRegisters::syscall(bool in_syscall) const {
  if (machine == Machine::kAarch64) return in_syscall ? static_cast<int64_t>(words[kArmX8]) : -1;
  return static_cast<int64_t>(words[kX86OrigRax]);
}

std::array<uint64_t, 6> MachineRegisters::syscall_arguments() const {
  if (machine == Machine::kAarch64) return {words[0], words[1], words[2], words[3], words[4], words[5]};
  return {words[kX86Rdi], words[kX86Rsi], words[kX86Rdx], words[kX86R10], words[kX86R8], words[kX86R9]};
}

void MachineRegisters::set_syscall(int64_t number, const std::array<uint64_t, 6>& arguments) {
  if (machine == Machine::kAarch64) {
    words[kArmX8] = static_cast<uint64_t>(number);
    for (size_t i = 0; i < arguments.size(); ++i) words[i] = arguments[i];
    return;
  }
  words[kX86OrigRax] = static_cast<uint64_t>(number);
  const size_t order[] = {kX86Rdi, kX86Rsi, kX86Rdx, kX86R10, kX86R8, kX86R9};
  for (size_t i = 0; i < arguments.size(); ++i) words[order[i]] = arguments[i];
}

std::array<uint64_t, 33> MachineRegisters::dwarf() const {
  std::array<uint64_t, 33> dwarf{};
  if (machine == Machine::kAarch64) {
    std::copy(words.begin(), words.begin() + 32, dwarf.begin());
    dwarf[32] = pc();
    return dwarf;
  }
  // user_regs_struct's order: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax
  // rip cs eflags rsp ...
  const auto& w = words;
  const std::array<uint64_t, 17> x86 = {w[10], w[12], w[11], w[5], w[13], w[14], w[4], w[19],
                                        w[9],  w[8],  w[7],  w[6], w[3],  w[2],  w[1], w[0], w[16]};
  std::copy(x86.begin(), x86.end(), dwarf.begin());
  return dwarf;
}

cpython::NativeThread MachineRegisters::native_thread(int64_t lwp, bool in_syscall) const {
  cpython::NativeThread thread{lwp, pthread_self(), pc(), sp()};
  thread.machine = machine;
  thread.syscall = syscall(in_syscall);
  if (thread.syscall < 0) return thread;
  // x0 holds -errno (-4095..-1): the call returned, interrupted; x0 was its first argument.
  const auto x0 = static_cast<int64_t>(words[0]);
  if (machine == Machine::kAarch64 && x0 < 0 && x0 >= -4095) {
    thread.syscall_arguments_lost = true;
    return thread;
  }
  thread.syscall_arguments = syscall_arguments();
  return thread;
}

bool is_aarch64_svc(std::span<const std::byte, 4> code) {
  uint32_t instruction = 0;
  std::memcpy(&instruction, code.data(), sizeof instruction);  // aarch64 Linux is little-endian
  return instruction == 0xd4000001;
}

}  // namespace hangpy::targets
