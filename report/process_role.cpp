#include "report/process_role.h"

#include <algorithm>
#include <vector>

namespace hangpy::report {
namespace {

std::string_view base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t start = text.find_first_not_of(' ', at);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(text.find(' ', start), text.size());
    out.push_back(text.substr(start, end - start));
    at = end;
  }
  return out;
}

// Whether any thread runs a frame of `function` (any function when empty) in a file whose path
// ends with `file_suffix` or holds `file_part`.
bool runs(const cpython::ProcessStacks* stacks, std::string_view file_part,
          std::string_view function = {}) {
  if (!stacks) return false;
  for (const cpython::PythonThread& thread : stacks->threads) {
    for (const cpython::PythonFrame& frame : thread.frames) {
      if (frame.file.find(file_part) == std::string::npos) continue;
      if (function.empty() || frame.function == function) return true;
    }
  }
  return false;
}

bool has_variable(const std::map<std::string, std::string>* environment, const char* name) {
  return environment && environment->contains(name);
}

// torchrun is a console script (`python3 /usr/bin/torchrun ...`, or `torchrun ...` through its
// shebang); `python -m torch.distributed.run` and the older `torch.distributed.launch` are the
// same agent. Only the program and the interpreter's own options count: the words after the
// script are its arguments, and may be anything.
bool is_elastic_agent_command(std::string_view arguments) {
  const std::vector<std::string_view> argv = words(arguments);
  if (argv.empty()) return false;
  if (base_name(argv[0]) == "torchrun") return true;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "-m") {
      return i + 1 < argv.size() &&
             (argv[i + 1] == "torch.distributed.run" || argv[i + 1] == "torch.distributed.launch");
    }
    if (!argv[i].starts_with('-')) return base_name(argv[i]) == "torchrun";  // the script
  }
  return false;
}

}  // namespace

std::string_view role_name(ProcessRole role) {
  switch (role) {
    case ProcessRole::kElasticAgent: return "elastic agent";
    case ProcessRole::kTrainingRank: return "training rank";
    case ProcessRole::kDataLoaderWorker: return "DataLoader worker";
    case ProcessRole::kTorchShmManager: return "torch_shm_manager";
    case ProcessRole::kResourceTracker: return "resource_tracker";
    case ProcessRole::kGunicornArbiter: return "gunicorn arbiter";
    case ProcessRole::kGunicornWorker: return "gunicorn worker";
    case ProcessRole::kChild: return "child";
    case ProcessRole::kProcess: return "process";
  }
  return "process";
}

ProcessRole classify_process(const RoleEvidence& evidence) {
  const std::string_view arguments = evidence.arguments;
  const std::vector<std::string_view> argv = words(arguments);
  const std::string_view first_word = argv.empty() ? std::string_view() : argv.front();
  // A native program: comm is cut to 15 bytes ("torch_shm_manag").
  if (base_name(evidence.executable) == "torch_shm_manager" ||
      base_name(first_word) == "torch_shm_manager" || evidence.command == "torch_shm_manag" ||
      evidence.command == "torch_shm_manager")
    return ProcessRole::kTorchShmManager;
  // multiprocessing starts it as `python -c 'from multiprocessing.resource_tracker import
  // main;main(FD)'` (semaphore_tracker before 3.8, bpo-36867).
  if (arguments.find("multiprocessing.resource_tracker import main") != std::string_view::npos ||
      arguments.find("multiprocessing.semaphore_tracker import main") != std::string_view::npos ||
      runs(evidence.stacks, "multiprocessing/resource_tracker.py", "main") ||
      runs(evidence.stacks, "multiprocessing/semaphore_tracker.py", "main"))
    return ProcessRole::kResourceTracker;
  if (runs(evidence.stacks, "torch/utils/data/_utils/worker.py", "_worker_loop"))
    return ProcessRole::kDataLoaderWorker;
  // gunicorn names its processes through setproctitle when it is installed: "gunicorn: master
  // [app]", "gunicorn: worker [app]". Without it, both have the same command line; a worker is
  // forked inside Arbiter.spawn_worker, so its stack has arbiter frames below the worker's.
  if (arguments.starts_with("gunicorn: worker")) return ProcessRole::kGunicornWorker;
  if (arguments.starts_with("gunicorn: master")) return ProcessRole::kGunicornArbiter;
  if (runs(evidence.stacks, "gunicorn/workers/")) return ProcessRole::kGunicornWorker;
  if (runs(evidence.stacks, "gunicorn/arbiter.py")) return ProcessRole::kGunicornArbiter;
  if (is_elastic_agent_command(arguments) ||
      runs(evidence.stacks, "torch/distributed/elastic/agent/"))
    return ProcessRole::kElasticAgent;
  // A child forked by multiprocessing goes on from its parent's stack: Popen._launch returns
  // from os.fork() into BaseProcess._bootstrap. Its parent's frames (even mp.spawn's _wrap)
  // stay below, so this comes before any test the parent would pass.
  if (runs(evidence.stacks, "multiprocessing/popen_fork.py", "_launch")) return ProcessRole::kChild;
  // mp.spawn (and torchrun's multiprocessing start method) runs each rank in _wrap.
  if (runs(evidence.stacks, "torch/multiprocessing/spawn.py", "_wrap"))
    return ProcessRole::kTrainingRank;
  // Other multiprocessing children: spawn and forkserver ones by their command line, and by
  // BaseProcess._bootstrap (which every start method runs the target in); concurrent.futures'
  // process pool workers. They inherit their parent's RANK, so this comes before it.
  if (arguments.find("from multiprocessing.spawn import spawn_main") != std::string_view::npos ||
      arguments.find("from multiprocessing.forkserver import main") != std::string_view::npos ||
      runs(evidence.stacks, "multiprocessing/process.py", "_bootstrap") ||
      runs(evidence.stacks, "concurrent/futures/process.py", "_process_worker"))
    return ProcessRole::kChild;
  // Launchers give each rank its rank in the environment (torchrun: RANK; srun: SLURM_PROCID;
  // mpirun: OMPI_COMM_WORLD_RANK or PMI_RANK).
  for (const char* name : {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (has_variable(evidence.environment, name)) return ProcessRole::kTrainingRank;
  return ProcessRole::kProcess;
}

}  // namespace hangpy::report
