#include "jobs/watch_options.h"

#include <iostream>

#include <fmt/format.h>

#include "base/exit_codes.h"
#include "base/parse_number.h"

namespace po = boost::program_options;

namespace hangpy::jobs {
namespace {

po::options_description watch_visible_options() {
  po::options_description options("Watching");
  options.add_options()
      ("interval", po::value<std::string>()->value_name("SECONDS"),
       "look at every process this often (default 10); each look stops a process for about a "
       "millisecond (or not at all with --nonblocking)")
      ("after", po::value<std::string>()->value_name("SECONDS"),
       "call it a hang when the job has made no progress this long (default 300): every Python "
       "thread in the same frames, using no CPU and moving no data")
      ("any", "a hang is one process without progress for --after (default: every process of "
              "the job)")
      ("busy-is-stuck", "a thread burning CPU in the same frames makes no progress either (a "
                        "spin-wait, a GPU synchronisation that polls); by default it is busy, "
                        "not stuck")
      ("for", po::value<std::string>()->value_name("SECONDS"),
       "stop watching after this long, with exit code 0 if no hang was caught")
      ("exec", po::value<std::string>()->value_name("COMMAND"),
       "after a capture, run COMMAND with /bin/sh, with HANGPY_CAPTURE_DIR, HANGPY_VERDICT (the "
       "triage's file) and HANGPY_STUCK_PIDS set: a notification, a kill")
      ("must-move", po::value<std::vector<std::string>>()->composing()->value_name("THREAD"),
       "the threads that must move for a process to make progress, by name ('main' is the main "
       "thread; repeat for more); by default every thread but its helpers, whose names or "
       "functions say heartbeat, watchdog, log, metrics, progress... and a pool's idle threads")
      ("quiet,q", "no line per look; only the capture");
  return options;
}

void print_watch_usage(std::ostream& out, const po::options_description& options) {
  out << "Usage: coreanalyze watch [--pid PID | --name PATTERN | --slurm-job JOBID | --container ID] [options]\n"
         "  or:  coreanalyze watch --srun JOBID [options]\n"
         "  or:  coreanalyze watch --via 'podman exec CTR' [options]\n"
         "Watches a job's Python processes (the same selection as coreanalyze collect) and\n"
         "catches a hang when it happens: every --interval it reads each process's stacks and\n"
         "CPU time, and when the job has made no progress for --after it captures everything\n"
         "(collect's JSON and snapshot cores into the output directory, with the triage's\n"
         "verdict in triage.txt), prints the verdict, runs --exec and exits with 20. A process\n"
         "whose stacks change, or whose threads read or write, makes progress; one that burns\n"
         "CPU in the same frames is busy, not stuck. Each look is kept in DIR/looks.jsonl.\n\n"
      << options << "\n"
      << "Exit codes: 0 the job ended, or --for passed, with no hang caught; 2 usage error;\n"
         "3 the output directory cannot be written; 20 a hang was caught and captured.\n";
}

std::optional<int> parse_seconds(const po::variables_map& vm, const char* option, double least,
                                 double& value) {
  if (!vm.count(option)) return std::nullopt;
  const std::string text = vm[option].as<std::string>();
  char* end = nullptr;
  const double parsed = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || !(parsed >= least) || parsed > 30 * 86400.0) {
    fmt::print(stderr, "coreanalyze watch: --{} wants a number of seconds from {} up, not '{}'\n",
               option, least, text);
    return kExitUsage;
  }
  value = parsed;
  return std::nullopt;
}

}  // namespace

std::optional<int> parse_watch_options(int argc, char** argv, WatchOptions& options) {
  po::options_description visible;
  visible.add(watch_visible_options()).add(collect_visible_options());
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(visible).run(), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    fmt::print(stderr, "coreanalyze watch: {} (see --help)\n", error.what());
    return kExitUsage;
  }
  if (vm.count("help")) {
    print_watch_usage(std::cout, visible);
    return kExitSuccess;
  }
  if (vm.count("no-triage")) {
    fmt::print(stderr, "coreanalyze watch: a capture always has its triage: --no-triage is collect's\n");
    return kExitUsage;
  }
  if (auto failed = read_collect_options(vm, options.collect, "coreanalyze watch")) return failed;
  // A capture keeps snapshot cores unless told otherwise: the evidence outlives the job.
  if (!vm.count("cores")) options.collect.cores = CoreKind::kSnapshot;
  if (!vm.count("output")) options.collect.output_dir = dated_output_dir("hangpy-watch");
  if (auto failed = parse_seconds(vm, "interval", 0.1, options.interval_seconds)) return failed;
  if (auto failed = parse_seconds(vm, "after", 0.1, options.after_seconds)) return failed;
  if (vm.count("for")) {
    double seconds = 0;
    if (auto failed = parse_seconds(vm, "for", 0.1, seconds)) return failed;
    options.for_seconds = seconds;
  }
  if (options.after_seconds < options.interval_seconds) {
    fmt::print(stderr, "coreanalyze watch: --after ({} s) must be at least --interval ({} s): "
               "no progress is seen between two looks\n", options.after_seconds, options.interval_seconds);
    return kExitUsage;
  }
  options.any = vm.count("any") > 0;
  options.busy_is_stuck = vm.count("busy-is-stuck") > 0;
  if (vm.count("exec")) options.exec = vm["exec"].as<std::string>();
  options.quiet = vm.count("quiet") > 0;
  if (vm.count("must-move")) {
    for (const std::string& names : vm["must-move"].as<std::vector<std::string>>()) {
      if (names.empty()) {
        fmt::print(stderr, "coreanalyze watch: --must-move wants a thread's name, or main\n");
        return kExitUsage;
      }
      options.must_move.push_back(names);
    }
  }
  return std::nullopt;
}

}  // namespace hangpy::jobs
