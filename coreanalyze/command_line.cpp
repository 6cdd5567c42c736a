#include "coreanalyze/command_line.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "base/parse_number.h"
#include "base/exit_codes.h"
#include "cpython/layouts/all_layouts.h"
#include "cpython/version_probe.h"

namespace po = boost::program_options;

namespace hangpy::coreanalyze {
using namespace ::hangpy::targets;
namespace {

std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> parts;
  std::stringstream stream(list);
  for (std::string part; std::getline(stream, part, ':');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

po::options_description visible_options() {
  po::options_description options("Options");
  options.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version and exit")
      ("exe", po::value<std::string>()->value_name("PATH"),
       "the executable that produced the core, if not where the core says")
      ("sysroot", po::value<std::string>()->value_name("DIR"),
       "find the core's files under DIR (a copy of the machine's root)")
      ("lib-path", po::value<std::string>()->value_name("DIRS"),
       "also look for the core's files by name in these directories (DIR:DIR:...)")
      ("coredumpctl", po::value<std::string>()->value_name("MATCH"),
       "analyse the core systemd-coredump kept for MATCH (a PID, a program name, ...; see "
       "coredumpctl(1)) instead of a CORE file")
      ("python", po::value<std::string>()->value_name("X.Y"),
       "use the layout of this Python version (X.Y, or X.Yt for free-threaded builds) instead "
       "of detecting it")
      ("json", "print JSON (schema: docs/json-schema.md)")
      ("native", "unwind each Python thread's native stack and show it with its Python frames")
      ("native-all", "also the native stacks of the threads that run no Python (implies --native)")
      ("inlined", "also each native frame's source line and the functions inlined at it, from DWARF where it exists "
       "(implies --native; slower: reads the debug info of every module a frame is in)")
      ("locals", "show the arguments and local variables of every Python frame (bounded reprs)")
      ("no-tasks", "do not read asyncio's tasks (shown by default when the process imported asyncio)")
      ("max-tasks", po::value<std::string>()->value_name("N"),
       "read at most N asyncio tasks in full (default 100000; the rest are counted)")
      ("snapshot", po::value<std::string>()->value_name("FILE"),
       "also write a small self-contained core to FILE: only what this analysis read, no "
       "binaries needed (with --pid: %p in FILE is the PID; several PIDs without %p get FILE.PID)")
      ("context", po::value<std::string>()->value_name("N"),
       "show N source lines before and after each Python frame's line (0 to 100)")
      ("no-source", "open no source file: frames without their source lines (the file names a core "
                    "or process gives are untrusted paths)")
      ("pid", po::value<std::vector<std::string>>()->composing()->value_name("PID"),
       "analyse the running process PID instead of a core (repeat, or PID,PID,..., for several); "
       "its threads are stopped only while their stacks are read")
      ("nonblocking", "with --pid: read the process without stopping it (a stack may come out "
       "torn)")
      ("max-stop", po::value<std::string>()->value_name("MS"),
       "with --pid: release the process and give up when it has been stopped this long (default "
       "2000)")
      ("no-realtime", "with --pid: keep coreanalyze at its own priority while the process is "
       "stopped (by default it runs SCHED_FIFO then, where permitted, so that a loaded machine "
       "does not lengthen the stop)")
      ("no-color", "never color the text output (so does a non-empty NO_COLOR variable)");
  return options;
}

void print_usage(std::ostream& out, const po::options_description& options) {
  // The usage lines follow GNU's "  or:" form, and no option's text starts with "--": help2man
  // builds the man page from this text (packaging/CMakeLists.txt).
  out << "Usage: coreanalyze CORE [options]\n"
         "  or:  coreanalyze --pid PID [--pid PID...] [options]\n"
         "  or:  coreanalyze triage INPUT... [--pid PID...] [options]\n"
         "  or:  coreanalyze collect [--pid PID | --name PATTERN | ...] [options]\n"
         "  or:  coreanalyze watch [--pid PID | --name PATTERN | ...] [options]\n"
         "  or:  coreanalyze diff BEFORE AFTER [options]\n"
         "Prints every thread's Python stack from a core of a CPython process, or of a running one.\n"
         "Subcommands, each with its own --help:\n"
         "  triage   merges many processes of one job: which one is odd, and why they wait\n"
         "  collect  snapshots a whole job's processes (on many nodes, in a container)\n"
         "  watch    looks at a job again and again and captures it when it stops making progress\n"
         "  diff     compares two looks at a job: stuck, busy or slow, thread by thread\n"
         "CORE may be - to read the core from standard input (a file or a pipe).\n"
         "CORE is told by its content: an ELF core; one compressed with zstd, lz4, xz or gzip\n"
         "(systemd-coredump); an ABRT problem directory; an apport .crash file.\n"
         "With several PIDs the text reports follow each other and --json prints an array.\n\n"
      << options << "\n" << kExitCodesHelp;
}

// A usage error about a path option: one line naming the option, the path and the system error.
std::optional<int> check_directory(const char* option, const std::string& path) {
  struct stat status{};
  if (stat(path.c_str(), &status) != 0) {
    fmt::print(stderr, "coreanalyze: {} {}: {}\n", option, path, std::strerror(errno));
    return kExitUsage;
  }
  if (!S_ISDIR(status.st_mode)) {
    fmt::print(stderr, "coreanalyze: {} {}: not a directory\n", option, path);
    return kExitUsage;
  }
  return std::nullopt;
}

std::optional<int> check_paths(const CoreOptions& core) {
  if (!core.sysroot.empty()) {
    if (auto failed = check_directory("--sysroot", core.sysroot)) return failed;
  }
  for (const std::string& directory : core.lib_paths) {
    if (auto failed = check_directory("--lib-path", directory)) return failed;
  }
  if (core.executable && access(core.executable->c_str(), R_OK) != 0) {
    fmt::print(stderr, "coreanalyze: --exe {}: {}\n", *core.executable, std::strerror(errno));
    return kExitUsage;
  }
  return std::nullopt;
}

std::optional<int> parse_python(const std::string& text, CommandLine& line) {
  line.python = cpython::parse_version(text);
  if (!line.python) {
    fmt::print(stderr, "coreanalyze: --python takes X.Y or X.Yt (like 3.11 or 3.13t), not '{}'\n",
               text);
    return kExitUsage;
  }
  if (!cpython::find_layout(line.python->major, line.python->minor, line.python->free_threaded)) {
    fmt::print(stderr, "coreanalyze: --python {}: there is no such layout; layouts: {}\n", text,
               cpython::layout_names());
    return kExitUsage;
  }
  return std::nullopt;
}

// no-color.org: a NO_COLOR variable that is present and not empty turns color off.
bool color_wanted(const po::variables_map& vm) {
  const char* no_color = std::getenv("NO_COLOR");
  if (vm.count("no-color") || (no_color != nullptr && *no_color != '\0')) return false;
  return isatty(STDOUT_FILENO) != 0;
}

std::optional<int> parse_shared_options(const po::variables_map& vm, CommandLine& line);

// --pid and what goes with it; the options that need a core file are refused in one line.
std::optional<int> parse_live_options(const po::variables_map& vm, CommandLine& line) {
  if (vm.count("core")) {
    fmt::print(stderr, "coreanalyze: give a core file or --pid, not both\n");
    return kExitUsage;
  }
  for (const char* option : {"exe", "sysroot", "lib-path", "coredumpctl"}) {
    if (vm.count(option)) {
      fmt::print(stderr, "coreanalyze: --{} is for cores; with --pid the process's own files are "
                 "read through /proc/PID\n", option);
      return kExitUsage;
    }
  }
  if (vm.count("nonblocking")) {
    for (const char* option : {"native", "native-all", "inlined"}) {
      if (vm.count(option)) {
        fmt::print(stderr, "coreanalyze: --{} needs the registers of the stopped threads: it does "
                   "not go with --nonblocking\n", option);
        return kExitUsage;
      }
    }
  }
  if (auto bad = append_pid_lists(vm["pid"].as<std::vector<std::string>>(), line.pids)) {
    fmt::print(stderr, "coreanalyze: --pid wants a process id, not '{}'\n", *bad);
    return kExitUsage;
  }
  line.nonblocking = vm.count("nonblocking") > 0;
  line.realtime = vm.count("no-realtime") == 0;
  if (vm.count("max-stop")) {
    auto limit = parse_decimal<int>(vm["max-stop"].as<std::string>());
    if (!limit || *limit < 1 || *limit > 600000) {
      fmt::print(stderr, "coreanalyze: --max-stop wants milliseconds from 1 to 600000, not '{}'\n",
                 vm["max-stop"].as<std::string>());
      return kExitUsage;
    }
    line.max_stop_ms = *limit;
  }
  if (vm.count("hold-stopped")) {
    auto hold = parse_decimal<int>(vm["hold-stopped"].as<std::string>());
    if (!hold || *hold < 0 || *hold > 600000) {
      fmt::print(stderr, "coreanalyze: --hold-stopped wants milliseconds from 0 to 600000\n");
      return kExitUsage;
    }
    line.hold_stopped_ms = *hold;
  }
  if (vm.count("snapshot")) line.snapshot_path = vm["snapshot"].as<std::string>();
  return parse_shared_options(vm, line);
}

// The options that apply to a core and a live process alike.
std::optional<int> parse_shared_options(const po::variables_map& vm, CommandLine& line) {
  if (vm.count("python")) {
    if (auto failed = parse_python(vm["python"].as<std::string>(), line)) return failed;
  }
  line.json = vm.count("json") > 0;
  line.native_all = vm.count("native-all") > 0;
  line.inlined = vm.count("inlined") > 0;
  line.locals = vm.count("locals") > 0;
  line.no_source = vm.count("no-source") > 0;
  line.tasks = vm.count("no-tasks") == 0;
  if (vm.count("max-tasks")) {
    auto count = parse_decimal<size_t>(vm["max-tasks"].as<std::string>());
    if (!count || *count == 0) {
      fmt::print(stderr, "coreanalyze: --max-tasks wants a positive number, not '{}'\n",
                 vm["max-tasks"].as<std::string>());
      return kExitUsage;
    }
    line.max_tasks = *count;
  }
  line.native = line.native_all || line.inlined || vm.count("native") > 0;
  line.color = color_wanted(vm);
  if (vm.count("context")) {
    constexpr int kMaxContext = 100;  // more is a whole file per frame, not context
    auto count = parse_decimal<int>(vm["context"].as<std::string>());
    if (!count || *count < 0 || *count > kMaxContext) {
      fmt::print(stderr, "coreanalyze: --context wants a number of lines from 0 to {}, not '{}'\n",
                 kMaxContext, vm["context"].as<std::string>());
      return kExitUsage;
    }
    line.context_lines = *count;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, CommandLine& line) {
  po::options_description visible = visible_options();
  po::options_description all;
  // --hold-stopped MS keeps a live process stopped that much longer after its stacks are read:
  // only so that tests can signal coreanalyze, or pass --max-stop, while the process is stopped.
  all.add(visible).add_options()("core", po::value<std::string>())(
      "hold-stopped", po::value<std::string>());
  po::positional_options_description positional;
  positional.add("core", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    fmt::print(stderr, "coreanalyze: {} (see --help)\n", error.what());
    return kExitUsage;
  }
  if (vm.count("help")) {
    print_usage(std::cout, visible);
    return kExitSuccess;
  }
  if (vm.count("version")) {
    fmt::print("coreanalyze (hangpy) {}\nReads CPython {}.\n", HANGPY_VERSION,
               cpython::supported_versions());
    return kExitSuccess;
  }
  if (vm.count("pid")) return parse_live_options(vm, line);
  if (vm.count("nonblocking") || vm.count("max-stop") || vm.count("no-realtime")) {
    fmt::print(stderr, "coreanalyze: --nonblocking, --max-stop and --no-realtime go with --pid\n");
    return kExitUsage;
  }
  if (vm.count("coredumpctl")) {
    if (vm.count("core")) {
      fmt::print(stderr, "coreanalyze: give either a CORE or --coredumpctl MATCH, not both\n");
      return kExitUsage;
    }
    line.coredumpctl_match = vm["coredumpctl"].as<std::string>();
  } else if (!vm.count("core")) {
    fmt::print(stderr, "coreanalyze: no core file given (usage: coreanalyze CORE [options])\n");
    return kExitUsage;
  } else {
    line.core.core_path = vm["core"].as<std::string>();
  }
  if (vm.count("exe")) line.core.executable = vm["exe"].as<std::string>();
  if (vm.count("sysroot")) line.core.sysroot = vm["sysroot"].as<std::string>();
  if (vm.count("lib-path")) line.core.lib_paths = split_path_list(vm["lib-path"].as<std::string>());
  if (auto failed = check_paths(line.core)) return failed;
  if (vm.count("snapshot")) line.snapshot_path = vm["snapshot"].as<std::string>();
  return parse_shared_options(vm, line);
}

}  // namespace hangpy::coreanalyze
