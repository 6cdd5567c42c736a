// A thread's general registers as a core's NT_PRSTATUS holds them (its pr_reg), for the two 64-bit
// Linux machines hangpy reads: x86-64 and aarch64. The rest of a core's notes (the prstatus header
// before pr_reg, prpsinfo, siginfo, auxv, NT_FILE) have one layout on both, so only the registers
// and what is read off them differ: where the pc, stack and thread pointer are, which system call
// a thread sits in, and the DWARF numbering the unwinder starts from.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "cpython/target.h"

namespace hangpy::targets {

// elf.h's e_machine of a core of `machine`, and back (nullopt: a machine hangpy does not read).
uint16_t elf_machine(cpython::Machine machine);
std::optional<cpython::Machine> machine_of_elf(uint16_t e_machine);

// The 64-bit Linux prstatus header, the same on x86-64 and aarch64 (the kernel's elf_prstatus up
// to pr_reg); written out here because the C library's struct is only the host's.
struct PrstatusHeader {
  int32_t signal_number = 0;  // pr_info.si_signo
  int32_t signal_code = 0;
  int32_t signal_errno = 0;
  int16_t current_signal = 0;  // pr_cursig
  int16_t padding = 0;
  uint64_t pending = 0;
  uint64_t held = 0;
  int32_t pid = 0;
  int32_t parent_pid = 0;
  int32_t group = 0;
  int32_t session = 0;
  int64_t user_time[2] = {0, 0};  // timeval: seconds, microseconds
  int64_t system_time[2] = {0, 0};
  int64_t children_user_time[2] = {0, 0};
  int64_t children_system_time[2] = {0, 0};
};
static_assert(sizeof(PrstatusHeader) == 112);

// aarch64's NT_ARM_TLS ("LINUX" note): tpidr_el0, the thread pointer, which pr_reg lacks.
inline constexpr uint32_t kNoteArmTls = 0x401;

struct MachineRegisters {
  cpython::Machine machine = cpython::Machine::kX86_64;
  // pr_reg word by word: x86-64's user_regs_struct (27 words: r15 ... rip at 16, rsp at 19,
  // fs_base at 21), aarch64's user_pt_regs (34: x0-x30, sp, pc, pstate).
  std::array<uint64_t, 34> words{};
  // aarch64's tpidr_el0 (NT_ARM_TLS); 0 when the core has none (qemu's cores). x86-64 keeps its
  // thread pointer in pr_reg (fs_base).
  uint64_t arm_tls = 0;

  // How many words pr_reg has, and the whole prstatus note's size, on `machine`.
  static size_t word_count(cpython::Machine machine);
  static size_t prstatus_size(cpython::Machine machine);

  uint64_t pc() const;
  uint64_t sp() const;
  void set_pc(uint64_t value);
  void set_sp(uint64_t value);
  // The thread pointer register: x86-64 fs_base (glibc's struct pthread starts there: it is the
  // pthread_t); aarch64 tpidr_el0 (struct pthread ends there). 0 when unknown.
  uint64_t thread_register() const;
  // The pthread_t: fs_base on x86-64; on aarch64 0 here (it lies sizeof(struct pthread) below
  // tpidr_el0, a size only the C library knows: thread_pointers.h finds it by the LWP instead).
  uint64_t pthread_self() const;
  // Sets it where pr_reg holds it (x86-64's fs_base); aarch64 has no place for it.
  void set_pthread_self(uint64_t value);
  // x86-64: the system call being made (orig_rax, -1 none) and its arguments in the kernel's order.
  // aarch64 keeps the number in x8 and the arguments in x0-x5, but pr_reg does not say whether the
  // thread is in a call at all: `in_syscall` tells that (the instruction at or before the pc is
  // `svc #0`, syscall_instruction_at).
  int64_t syscall(bool in_syscall) const;
  std::array<uint64_t, 6> syscall_arguments() const;
  // Sets what syscall() and syscall_arguments() read (a live thread read from /proc).
  void set_syscall(int64_t number, const std::array<uint64_t, 6>& arguments);

  // The registers in the machine's DWARF numbering, as libdwfl starts a walk from them
  // (native::ThreadRegisters): x86-64 rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, then the pc
  // (16); aarch64 x0-x30, sp (31), then the pc at 32.
  std::array<uint64_t, 33> dwarf() const;

  // A NativeThread of `lwp` with pc, sp, pthread_t and the system call (see syscall()).
  cpython::NativeThread native_thread(int64_t lwp, bool in_syscall) const;
};

// Whether the 4 bytes at `code` are aarch64's `svc #0`.
bool is_aarch64_svc(std::span<const std::byte, 4> code);

}  // namespace hangpy::targets
