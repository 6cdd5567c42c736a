// How a LiveTarget is held while its stacks are read (analysis::ProcessTarget's prepare_hold,
// hold and native_unwinding): the warm pass's facts, each hold's StoppedProcess (process_stop.h),
// and the registers the last hold read, from which its threads are unwound.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "targets/process_stop.h"

namespace hangpy::targets {

struct HoldState {
  // From the warm pass (prepare_hold): the pthread_t of each thread state, which names its OS
  // thread before 3.11 (a thread read in its system call is matched to it through glibc's struct
  // pthread: thread_pointers.h), where glibc keeps the LWP in it, and the LWP of each.
  std::vector<uint64_t> thread_pointers;
  std::optional<uint64_t> pthread_offset;
  std::map<int64_t, uint64_t> thread_pointer_of_lwp;
  // The threads that run no Python, when every thread state names its OS thread (3.11+): the stop
  // leaves them running. Empty when that cannot be told, or every thread is to be stopped.
  std::set<int64_t> without_python;
  // From the last hold.
  bool held = false;
  bool released = false;
  std::vector<StoppedProcess::DwarfRegisters> dwarf_registers;
  std::vector<StoppedProcess::RegisterSet> register_sets;
  std::set<int64_t> asleep;  // left in their system calls, never stopped
};

}  // namespace hangpy::targets
