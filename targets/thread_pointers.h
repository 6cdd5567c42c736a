// The thread pointer (fs_base) of a thread that was not stopped, so has no registers but what
// /proc shows (blocked_threads.h). Before 3.11 a Python thread state names its OS thread only by
// pthread_self(), which on x86-64 glibc is the thread pointer; glibc keeps the thread's LWP in
// that struct pthread, at the offset its libthread_db descriptor gives.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "cpython/address_space.h"
#include "cpython/target.h"

namespace hangpy::targets {

// Sets the fs_base of each thread of `threads` that has none to the one of `candidates` (the
// pthread_t values the process's thread states hold) whose struct pthread holds its LWP. The
// offset of that field comes from glibc's `_thread_db_pthread_tid` descriptor ({bits, count,
// offset}: libc.so.6 from 2.34, libpthread.so.0 before), else from a thread whose fs_base is
// known (a stopped one). A candidate must also look like a thread control block (its `self`
// word, the third, points to itself). Threads no candidate fits keep fs_base 0.
// `descriptor_offset`: pthread_tid_offset(), looked up before the process was stopped;
// `known`: thread_pointers_by_lwp() read then too, used first (a thread in it costs no read, and
// a candidate in it is not read for another thread while its own is still there).
void fill_thread_pointers(const cpython::Target& target, std::span<const uint64_t> candidates,
                          std::vector<cpython::NativeThread>& threads, std::optional<uint64_t> descriptor_offset,
                          const std::map<int64_t, uint64_t>& known = {});

// The LWP each candidate's struct pthread holds, read with the process running: a live thread's
// LWP never changes and its struct pthread is its own while it lives, so the stop needs none of
// these reads (a page per thread: 140 reads for a torch rank, most of a loaded machine's stop).
std::map<int64_t, uint64_t> thread_pointers_by_lwp(const cpython::Target& target,
                                                   std::span<const uint64_t> candidates,
                                                   std::optional<uint64_t> descriptor_offset);

// The offset of the LWP in glibc's struct pthread. From a thread whose pthread_t and LWP are
// both known (`known`: 3.11+ thread states name both), a read of its struct pthread; else from
// libthread_db's `_thread_db_pthread_tid` descriptor, a lookup that opens every module's file
// until one has the symbol (libc is among the last mapped; Debian's libc has it only in
// libc6-dbg's table): 30 ms for a process with 20 extension modules, which must be spent before
// the process is stopped, and only where no thread state names its LWP.
struct KnownThread {
  uint64_t pointer = 0;  // pthread_t
  int64_t lwp = 0;
};
std::optional<uint64_t> pthread_tid_offset(const cpython::Target& target, std::span<const KnownThread> known);

}  // namespace hangpy::targets
