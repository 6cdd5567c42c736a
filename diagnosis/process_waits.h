// The waits that take the whole process or the target's facts to tell: a native thread pool lost
// at fork, the interpreter's exit waiting for what is no daemon, the file descriptor or path a
// thread blocks on, a worker loop's wait for work (idle). Internal to diagnosis/.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cpython/stacks.h"
#include "diagnosis/classify.h"
#include "diagnosis/context.h"
#include "diagnosis/diagnosis.h"

namespace hangpy::diagnosis::detail {

// A thread waiting inside a native thread pool (OpenMP, OpenBLAS, MKL): for its team's threads.
// A process with no other thread has lost them: a fork keeps only the forking thread, and a pool
// started before it waits for ever for workers the child does not have.
BlockedOn thread_pool_blocked_on(const Context& context, const NativeHint& hint, const ThreadDiagnosis& diagnosis);

// Whether the thread runs the interpreter's exit: threading joining the threads that are no
// daemons, multiprocessing joining its children and its queues' feeder threads.
bool in_exit(const std::vector<cpython::PythonFrame>& frames);

// A thread in the interpreter's exit: a wait threading's exit makes that names no thread (3.13 on
// joins in C, on a futex of its own) is for the threads that are no daemons, which are named.
void mark_exit_wait(const Context& context, ProcessDiagnosis& result, size_t index);

// What the file descriptor a thread blocks on is, where the target can say: the file, the pipe,
// the socket's addresses.
void name_file_descriptor(const std::function<std::optional<FileDescriptorFacts>(int64_t)>& describe_fd,
                          ThreadDiagnosis& thread);

// A thread blocked opening a file (a FIFO's open waits for its other end, an NFS file's for its
// server): the path, read from the call's argument.
void name_opened_path(const Context& context, ThreadDiagnosis& thread);

// A child waited for by its PID namespace's id (a container's process): named by the reader's.
void name_child_in_namespace(const std::vector<cpython::NamespacePid>& namespace_pids, ThreadDiagnosis& thread);

// The waits a worker loop makes for its next piece of work (a lock or a collective is never that).
bool idle_wait(WaitKind kind);

}  // namespace hangpy::diagnosis::detail
