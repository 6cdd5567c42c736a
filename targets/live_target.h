// A running process as the engine's Target, read-only: memory through process_vm_readv (a page
// at a time, kept until forget_memory() or read anew by refresh_memory()), modules
// from /proc/PID/maps with their files opened through /proc/PID/root (so a process in a container
// or chroot resolves its own files) or /proc/PID/map_files, the process's facts from /proc/PID.
// Threads come from /proc/PID/task; their registers from ptrace while the process is stopped
// (set_registers, see process_stop.h), else from /proc/PID/task/TID/syscall.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/process_target.h"
#include "base/error.h"
#include "cpython/target.h"

namespace hangpy::symbols {
class ElfFile;
}

namespace hangpy::targets {

// Why a live process cannot be analysed: the exit code depends on it.
using LiveFailure = analysis::HoldFailure;

template <typename T>
using LiveExpected = std::expected<T, LiveFailure>;

struct HoldState;  // live_hold.h

class LiveTarget : public analysis::ProcessTarget {
 public:
  static LiveExpected<std::unique_ptr<LiveTarget>> open(int pid);

  // The PID, threads (with the registers set_registers gave), container PIDs and function names,
  // and what each file descriptor is, from /proc (file_descriptors.h).
  analysis::TargetFacts facts() const override;
  // /proc/PID/environ and this machine's name (environment_sources.cpp).
  cpython::ProcessEnvironment environment() const override;
  // The stop (live_hold.h): the warm pass's facts kept by prepare_hold, the process held by
  // hold(), its threads unwound from the registers the last hold read.
  void prepare_hold(const cpython::ProcessStacks& first, bool stop_every_thread,
                    const std::function<void()>& read_details) override;
  std::expected<std::unique_ptr<analysis::Hold>, analysis::HoldFailure> hold(const analysis::HoldOptions& options) override;
  std::unique_ptr<analysis::NativeUnwinding> native_unwinding(bool inlined_frames) const override;
  // What the last hold read (live_hold.h): its threads' registers, which a snapshot keeps, and
  // those it left asleep; null before a hold.
  const HoldState* last_hold() const;

  virtual const cpython::ProcessInfo& process() const = 0;
  virtual const std::vector<std::string>& warnings() const = 0;
  virtual std::optional<std::string> function_at(uint64_t pc) const = 0;
  // The host path of the file the process mapped at `recorded_path` (as /proc/PID/maps names
  // it), opened on first need; nullopt when there is none.
  virtual std::optional<std::string> module_file(const std::string& recorded_path) const = 0;
  // The opened file behind that module, as module_file() finds it; nullptr when there is none.
  virtual const symbols::ElfFile* module_elf_file(const std::string& recorded_path) const = 0;
  // Where the vDSO is mapped ([start, end)), if it is.
  virtual std::optional<cpython::MemoryRange> vdso() const = 0;
  // The threads' registers as ptrace read them while the process was stopped; until this is
  // called (and with --nonblocking), threads() reads /proc/PID/task/TID/syscall, which has no
  // thread pointer (fs_base).
  virtual void set_registers(std::vector<cpython::NativeThread> threads) = 0;
  // Drops the memory read so far (kept by page): what is read next is the process's memory now.
  virtual void forget_memory() = 0;
  // Reads again every page kept, in a few system calls, as the process has it now (but those
  // refresh_memory_read_for() read since the last refresh_memory()).
  virtual void refresh_memory() = 0;
  // Reads again, before a stop, the pages kept that the stack walk read for threads in `asleep`
  // alone (AddressSpace::attribute_reads: by LWP or pthread_t), threads left asleep in their
  // system calls, which the stop checks did not run meanwhile; and those of mappings the process
  // could not write.
  virtual void refresh_memory_read_for(const std::set<int64_t>& asleep) = 0;
  // From here on the pages read are noted as no one thread's (the warm pass's details).
  virtual void stop_noting_readers() = 0;
  // The pages kept now (their addresses), and dropping every page but those: a first pass keeps
  // only what the stack walk read, so that the stopped window reads no more than that anew.
  virtual std::vector<uint64_t> kept_pages() const = 0;
  virtual void keep_only(const std::vector<uint64_t>& pages) = 0;

  LiveTarget();
  ~LiveTarget() override;

 private:
  std::unique_ptr<HoldState> hold_state_;
};

// One line for a failed ptrace or /proc access to `pid`, from errno: says what to do when it is
// a permission problem (ptrace_scope, CAP_SYS_PTRACE, another tracer such as gdb).
LiveFailure describe_access_failure(int pid, int error_number, const std::string& what);

}  // namespace hangpy::targets
