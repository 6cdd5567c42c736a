#include "diagnosis/classify.h"

#include "base/ascii_case.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

namespace hangpy::diagnosis {
namespace {

constexpr size_t kFramesLooked = 8;        // innermost Python frames a wait is looked for in
constexpr size_t kNativeFramesLooked = 256;  // innermost native frames read for hints

struct KnownWait {
  std::string_view file_suffix;
  std::string_view function;  // co_name
  WaitKind kind;
  std::string_view what;
};

// Standard-library functions that block, by file and co_name (co_qualname exists only from 3.11).
constexpr std::array kKnownWaits = {
    KnownWait{"/threading.py", "wait", WaitKind::kCondition, "wait"},
    KnownWait{"/threading.py", "wait_for", WaitKind::kCondition, "Condition.wait_for"},
    KnownWait{"/threading.py", "acquire", WaitKind::kSemaphore, "acquire"},
    KnownWait{"/threading.py", "join", WaitKind::kJoin, "Thread.join"},
    KnownWait{"/threading.py", "_wait_for_tstate_lock", WaitKind::kJoin, "Thread.join"},
    KnownWait{"/queue.py", "get", WaitKind::kQueue, "queue.Queue.get"},
    KnownWait{"/queue.py", "put", WaitKind::kQueue, "queue.Queue.put"},
    KnownWait{"/queue.py", "join", WaitKind::kQueue, "queue.Queue.join"},
    KnownWait{"/Queue.py", "get", WaitKind::kQueue, "Queue.Queue.get"},
    KnownWait{"/Queue.py", "put", WaitKind::kQueue, "Queue.Queue.put"},
    KnownWait{"/multiprocessing/queues.py", "get", WaitKind::kProcessQueue, "multiprocessing queue get"},
    KnownWait{"/multiprocessing/queues.py", "put", WaitKind::kProcessQueue, "multiprocessing queue put"},
    KnownWait{"/multiprocessing/connection.py", "recv", WaitKind::kProcessQueue, "multiprocessing connection recv"},
    KnownWait{"/multiprocessing/connection.py", "recv_bytes", WaitKind::kProcessQueue, "multiprocessing connection recv"},
    KnownWait{"/multiprocessing/connection.py", "poll", WaitKind::kProcessQueue, "multiprocessing connection poll"},
    KnownWait{"/multiprocessing/connection.py", "wait", WaitKind::kProcessQueue, "multiprocessing connection wait"},
    KnownWait{"/subprocess.py", "wait", WaitKind::kChildProcess, "subprocess wait"},
    KnownWait{"/subprocess.py", "_wait", WaitKind::kChildProcess, "subprocess wait"},
    KnownWait{"/subprocess.py", "_try_wait", WaitKind::kChildProcess, "subprocess wait"},
    KnownWait{"/subprocess.py", "communicate", WaitKind::kChildProcess, "subprocess communicate"},
    KnownWait{"/selectors.py", "select", WaitKind::kMultiplex, "selectors select"},
    KnownWait{"/asyncio/base_events.py", "_run_once", WaitKind::kMultiplex, "asyncio event loop"},
    KnownWait{"/socket.py", "accept", WaitKind::kSocket, "socket accept"},
    KnownWait{"/socket.py", "readinto", WaitKind::kSocket, "socket read"},
    KnownWait{"/socket.py", "create_connection", WaitKind::kSocket, "socket connect"},
    // torch.distributed's collectives wait in C++ (c10d::Work::wait), named by their Python call.
    KnownWait{"/torch/distributed/distributed_c10d.py", "all_reduce", WaitKind::kCollective, "torch.distributed.all_reduce"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "barrier", WaitKind::kCollective, "torch.distributed.barrier"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "monitored_barrier", WaitKind::kCollective, "torch.distributed.monitored_barrier"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "broadcast", WaitKind::kCollective, "torch.distributed.broadcast"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "all_gather", WaitKind::kCollective, "torch.distributed.all_gather"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "all_gather_into_tensor", WaitKind::kCollective, "torch.distributed.all_gather_into_tensor"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "reduce_scatter", WaitKind::kCollective, "torch.distributed.reduce_scatter"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "reduce_scatter_tensor", WaitKind::kCollective, "torch.distributed.reduce_scatter_tensor"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "all_to_all", WaitKind::kCollective, "torch.distributed.all_to_all"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "all_to_all_single", WaitKind::kCollective, "torch.distributed.all_to_all_single"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "reduce", WaitKind::kCollective, "torch.distributed.reduce"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "gather", WaitKind::kCollective, "torch.distributed.gather"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "scatter", WaitKind::kCollective, "torch.distributed.scatter"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "send", WaitKind::kCollective, "torch.distributed.send"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "recv", WaitKind::kCollective, "torch.distributed.recv"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "all_gather_object", WaitKind::kCollective, "torch.distributed.all_gather_object"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "broadcast_object_list", WaitKind::kCollective, "torch.distributed.broadcast_object_list"},
    // Waits users did not write as collectives: DistributedDataParallel's constructor checks and
    // the process group's rendezvous in init_process_group.
    KnownWait{"/torch/distributed/utils.py", "_verify_param_shape_across_processes", WaitKind::kCollective,
              "DDP's constructor: the check that every rank's parameters have the same shapes"},
    KnownWait{"/torch/distributed/utils.py", "_sync_module_states", WaitKind::kCollective,
              "DDP's constructor: the broadcast of rank 0's module state"},
    KnownWait{"/torch/distributed/utils.py", "_sync_params_and_buffers", WaitKind::kCollective,
              "DDP's constructor: the broadcast of rank 0's module state"},
    KnownWait{"/torch/distributed/distributed_c10d.py", "_store_based_barrier", WaitKind::kCollective,
              "init_process_group's rendezvous: waiting for every rank to join"},
    // The rank that hosts the TCPStore waits there for every other rank to connect, the others
    // wait to reach it: the words hold for both.
    KnownWait{"/torch/distributed/rendezvous.py", "_create_c10d_store", WaitKind::kCollective,
              "init_process_group's rendezvous: the TCPStore that every rank must connect to"},
    KnownWait{"/torch/distributed/rendezvous.py", "_env_rendezvous_handler", WaitKind::kCollective,
              "init_process_group's rendezvous: the TCPStore that every rank must connect to"},
};

// Files whose frames a wait may pass through on its way to the one that names it.
constexpr std::array<std::string_view, 9> kStdlibFiles = {
    "/threading.py", "/queue.py", "/Queue.py", "/multiprocessing/", "/subprocess.py",
    "/selectors.py", "/asyncio/", "/socket.py", "/torch/distributed/"};

bool is_stdlib_wait_file(std::string_view file) {
  return std::any_of(kStdlibFiles.begin(), kStdlibFiles.end(),
                     [&](std::string_view part) { return file.find(part) != std::string_view::npos; });
}

const KnownWait* known_wait(const cpython::PythonFrame& frame) {
  for (const KnownWait& wait : kKnownWaits)
    if (frame.function == wait.function && std::string_view(frame.file).ends_with(wait.file_suffix))
      return &wait;
  return nullptr;
}

// The collective a c10d/gloo/NCCL frame runs, by the words in its (mangled) name.
std::optional<std::string> collective_op(const std::string& lower) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 16> kOps = {{
      {"allreduce", "allreduce"}, {"all_reduce", "allreduce"}, {"allgather", "allgather"},
      {"all_gather", "allgather"}, {"reduce_scatter", "reduce_scatter"},
      {"reducescatter", "reduce_scatter"}, {"alltoall", "alltoall"}, {"all_to_all", "alltoall"},
      {"broadcast", "broadcast"}, {"barrier", "barrier"}, {"monitoredbarrier", "barrier"},
      {"gather", "gather"}, {"scatter", "scatter"}, {"reduce", "reduce"}, {"recv", "recv"},
      {"send", "send"}}};
  for (const auto& [word, op] : kOps)
    if (lower.find(word) != std::string::npos) return std::string(op);
  return std::nullopt;
}

struct WorkLoop {
  std::string_view file_suffix;
  std::string_view function;
};

// Loops that wait for their next piece of work; between two pieces they are idle.
constexpr std::array kWorkLoops = {
    WorkLoop{"/concurrent/futures/thread.py", "_worker"},
    WorkLoop{"/concurrent/futures/process.py", "_process_worker"},
    WorkLoop{"/multiprocessing/pool.py", "worker"},
    WorkLoop{"/multiprocessing/managers.py", "serve_forever"},
    WorkLoop{"/multiprocessing/queues.py", "_feed"},  // a queue's feeder thread, with nothing to send
    WorkLoop{"/multiprocessing/resource_sharer.py", "_serve"},
    WorkLoop{"/socketserver.py", "serve_forever"},
    WorkLoop{"/asyncio/base_events.py", "_run_once"},  // an event loop with nothing ready
    WorkLoop{"/torch/utils/data/_utils/worker.py", "_worker_loop"},
    WorkLoop{"/torch/utils/data/_utils/pin_memory.py", "_pin_memory_loop"},
    WorkLoop{"/gunicorn/workers/sync.py", "wait"},
    WorkLoop{"/gunicorn/workers/gthread.py", "run"},
    WorkLoop{"/gunicorn/arbiter.py", "sleep"},
    WorkLoop{"/uvicorn/server.py", "main_loop"},
};

bool is_work_loop(const cpython::PythonFrame& frame) {
  return std::any_of(kWorkLoops.begin(), kWorkLoops.end(), [&](const WorkLoop& loop) {
    return frame.function == loop.function && std::string_view(frame.file).ends_with(loop.file_suffix);
  });
}

// The thread pool a library module runs (its frames are the pool's team waiting or working).
std::string thread_pool_of(std::string_view module) {
  if (module.starts_with("libgomp")) return "OpenMP (libgomp)";
  if (module.starts_with("libiomp")) return "OpenMP (Intel libiomp)";
  if (module.starts_with("libomp")) return "OpenMP (LLVM libomp)";
  if (module.starts_with("libopenblas")) return "OpenBLAS";
  if (module.starts_with("libmkl_")) return "MKL";
  return "";
}

}  // namespace

bool waits_for_work(const std::vector<cpython::PythonFrame>& frames) {
  // From the innermost frame out through the standard library's waits (Queue.get, Condition.wait,
  // a multiprocessing connection's poll) to the first frame of other code: a work loop is idle.
  for (size_t i = 0; i < frames.size() && i < kFramesLooked; ++i) {
    if (is_work_loop(frames[i])) return true;
    // A server waiting for its next client, whoever wrote the loop around it.
    if (frames[i].function == "accept" && std::string_view(frames[i].file).ends_with("/socket.py")) return true;
    if (!is_stdlib_wait_file(frames[i].file)) return false;
  }
  return false;
}

bool is_symbol_or_clone(std::string_view symbol, std::string_view name) {
  // glibc's internal aliases (__GI___lll_lock_wait) and versioned names (pthread_mutex_lock@GLIBC_2.2.5)
  // are the same functions.
  if (symbol.starts_with("__GI_")) symbol.remove_prefix(5);
  if (size_t at = symbol.find('@'); at != std::string_view::npos) symbol = symbol.substr(0, at);
  if (!symbol.starts_with(name)) return false;
  return symbol.size() == name.size() || symbol[name.size()] == '.';
}

std::optional<StdlibWait> find_stdlib_wait(const std::vector<cpython::PythonFrame>& frames) {
  std::optional<StdlibWait> found;
  for (size_t i = 0; i < frames.size() && i < kFramesLooked; ++i) {
    const cpython::PythonFrame& frame = frames[i];
    if (!is_stdlib_wait_file(frame.file)) break;
    if (const KnownWait* wait = known_wait(frame)) found = StdlibWait{i, wait->kind, std::string(wait->what)};
  }
  return found;
}

NativeHint read_native_hint(const native::MergedStack& stack, std::string_view eval_loop_function) {
  static constexpr std::array<std::string_view, 10> kCollectors = {
      "gc_collect_main", "gc_collect_region", "gc_collect_full", "gc_collect_young",
      "gc_collect_increment", "gc_collect_with_callback", "collect_with_callback",
      "collect_generations", "_PyGC_Collect", "PyGC_Collect"};
  static constexpr std::array<std::string_view, 6> kMutexWaits = {
      "__lll_lock_wait", "pthread_mutex_lock", "__pthread_mutex_lock", "___pthread_mutex_lock",
      "pthread_mutex_timedlock", "__pthread_mutex_lock_full"};
  NativeHint hint;
  std::string op;
  std::string backend;
  bool ddp_backward = false;
  bool store_wait = false;
  bool innermost_seen = false;
  size_t looked = 0;
  for (const native::MergedFrame& frame : stack.frames) {
    if (looked++ >= kNativeFramesLooked) break;
    if (frame.python) {
      if (!innermost_seen) hint.innermost_is_python = true;
      innermost_seen = true;
      continue;
    }
    if (!frame.native) continue;
    const std::string& symbol = frame.native->symbol;
    if (!innermost_seen) {
      // The innermost frame decides: a frame without a symbol is machine code all the same.
      innermost_seen = true;
      if (symbol.empty()) {
        std::string module = frame.native->module.substr(frame.native->module.rfind('/') + 1);
        hint.innermost_symbol = module.empty() ? "??" : fmt::format("?? ({}+0x{:x})", module,
                                                                       frame.native->module_offset);
      } else {
        hint.innermost_symbol = symbol;
        hint.innermost_is_python = native::is_eval_loop_symbol(symbol, eval_loop_function);
      }
    }
    {
      const std::string_view module = std::string_view(frame.native->module).substr(frame.native->module.rfind('/') + 1);
      if (hint.thread_pool.empty()) hint.thread_pool = thread_pool_of(module);
    }
    if (hint.caller_outside_libc.empty()) {
      const std::string module = frame.native->module.substr(frame.native->module.rfind('/') + 1);
      if (!module.empty() && !module.starts_with("libc.") && !module.starts_with("libpthread") &&
          !module.starts_with("ld-linux")) {
        hint.caller_outside_libc = symbol.empty() ? fmt::format("{}+0x{:x}", module, frame.native->module_offset)
                                                  : fmt::format("{} ({})", symbol, module);
      }
    }
    if (symbol.empty()) continue;
    if (is_symbol_or_clone(symbol, "take_gil")) hint.takes_gil = true;
    for (std::string_view collector : kCollectors)
      if (is_symbol_or_clone(symbol, collector)) hint.collecting = true;
    for (std::string_view wait : kMutexWaits)
      if (is_symbol_or_clone(symbol, wait)) hint.pthread_mutex = true;
    // The op comes from the outermost such frame (c10d's API, not the transport's send/recv
    // underneath it); the backend from any frame that names one.
    std::string lower = ascii_lowercase(symbol);
    const bool distributed = lower.find("c10d") != std::string::npos ||
                             lower.find("gloo") != std::string::npos ||
                             lower.find("nccl") != std::string::npos;
    if (!distributed) continue;
    if (lower.find("nccl") != std::string::npos) backend = "NCCL";
    else if (lower.find("gloo") != std::string::npos && backend != "NCCL") backend = "gloo";
    // DDP's reducer waits in backward() for the gradients' all_reduce it started; a TCPStore
    // waits for its server (the rendezvous).
    // (Names come demangled or not: "c10d::Reducer::..." and "_ZN4c10d7Reducer...".)
    if (lower.find("c10d") != std::string::npos && lower.find("reducer") != std::string::npos) ddp_backward = true;
    else if (lower.find("tcpstore") != std::string::npos) store_wait = true;
    else if (auto found = collective_op(lower)) op = *found;
  }
  const std::string on = " (" + (backend.empty() ? std::string("c10d") : backend) + ")";
  if (ddp_backward) hint.collective = "DDP's gradient all_reduce in backward()" + on;
  else if (!op.empty()) hint.collective = op + on;
  else if (store_wait) hint.collective = "a TCPStore wait (the process group's rendezvous)";
  return hint;
}

}  // namespace hangpy::diagnosis
