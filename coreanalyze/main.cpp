// coreanalyze: every thread's Python stack from a core file, offline.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "coreanalyze/core_file.h"
#include "coreanalyze/core_target.h"
#include "coreanalyze/exit_codes.h"
#include "coreanalyze/recording_target.h"
#include "coreanalyze/snapshot_writer.h"
#include "cpython/analyzer.h"
#include "cpython/version_probe.h"
#include "report/json_report.h"
#include "report/stack_report.h"

namespace po = boost::program_options;
using namespace hangpy;
using namespace hangpy::coreanalyze;

namespace {

constexpr const char* kVersion = "0.1.0";

struct CommandLine {
  CoreOptions core;
  std::optional<cpython::PythonVersion> python;
  std::optional<std::string> snapshot_path;
  bool json = false;
  bool color = false;
};

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
      ("exe", po::value<std::string>()->value_name("PATH"), "the executable that produced the core, if not where "
                                        "the core says")
      ("sysroot", po::value<std::string>()->value_name("DIR"), "find the core's files under DIR (a copy of the "
                                            "machine's root)")
      ("lib-path", po::value<std::string>()->value_name("DIRS"), "also look for the core's files by name in these "
                                             "directories (DIR:DIR:...)")
      ("python", po::value<std::string>()->value_name("X.Y"), "use the layout of this Python version (X.Y, or X.Yt "
                                           "for free-threaded builds) instead of detecting it")
      ("json", "print JSON (schema: docs/json-schema.md)")
      ("snapshot", po::value<std::string>()->value_name("FILE"), "also write a small self-contained core to FILE: "
                                             "only what this analysis read, no binaries needed")
      ("no-color", "never color the text output");
  return options;
}

void print_usage(std::ostream& out, const po::options_description& options) {
  out << "Usage: coreanalyze CORE [options]\n"
         "Prints every thread's Python stack from a core of a CPython process.\n\n"
      << options << "\nExit codes: 0 success, 2 usage error, 3 unreadable input or not a core,\n"
                    "4 no Python interpreter found, 5 partial result,\n"
                    "6 the Python layout (detected or --python) does not fit the process.\n";
}

// Parses argv; returns an exit code when the program should stop right away.
std::optional<int> parse(int argc, char** argv, CommandLine& line) {
  po::options_description visible = visible_options();
  po::options_description all;
  all.add(visible).add_options()("core", po::value<std::string>());
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
    fmt::print("coreanalyze (hangpy) {}\n", kVersion);
    return kExitSuccess;
  }
  if (!vm.count("core")) {
    fmt::print(stderr, "coreanalyze: no core file given (usage: coreanalyze CORE [options])\n");
    return kExitUsage;
  }
  line.core.core_path = vm["core"].as<std::string>();
  if (vm.count("exe")) line.core.executable = vm["exe"].as<std::string>();
  if (vm.count("sysroot")) line.core.sysroot = vm["sysroot"].as<std::string>();
  if (vm.count("lib-path")) line.core.lib_paths = split_path_list(vm["lib-path"].as<std::string>());
  if (vm.count("python")) {
    const auto& text = vm["python"].as<std::string>();
    line.python = cpython::parse_version(text);
    if (!line.python) {
      fmt::print(stderr, "coreanalyze: --python takes X.Y or X.Yt (like 3.11 or 3.13t), not '{}'\n",
                 text);
      return kExitUsage;
    }
  }
  if (vm.count("snapshot")) line.snapshot_path = vm["snapshot"].as<std::string>();
  line.json = vm.count("json") > 0;
  line.color = !vm.count("no-color") && isatty(STDOUT_FILENO);
  return std::nullopt;
}

std::vector<std::string> all_warnings(const CoreTarget& target,
                                      const cpython::ProcessStacks& stacks) {
  std::vector<std::string> warnings = target.warnings();
  warnings.insert(warnings.end(), stacks.warnings.begin(), stacks.warnings.end());
  return warnings;
}

// The ELF files the process had mapped, as the core records them.
std::vector<std::string> module_paths(const CoreTarget& target) {
  std::vector<std::string> paths;
  for (const auto& module : target.modules()) paths.push_back(module.path);
  return paths;
}

void print_json(const CommandLine& line, const CoreTarget& target,
                const cpython::ProcessStacks& stacks) {
  nlohmann::json out = report::stacks_to_json(stacks);
  const ProcessInfo& process = target.process();
  nlohmann::json info = {
      {"pid", process.pid},
      {"command", process.command},
      {"arguments", process.arguments},
      {"executable", process.executable},
      {"signal", process.signal ? nlohmann::json(*process.signal) : nlohmann::json(nullptr)},
      {"python_version", out["python_version"]},
      {"layout", out["layout"]},
      {"layout_source", out["layout_source"]},
      {"modules", module_paths(target)},
  };
  nlohmann::json document = {
      {"hangpy_version", kVersion},
      {"core", line.core.core_path},
      {"process", std::move(info)},
      {"warnings", all_warnings(target, stacks)},
      {"notes", stacks.notes},
      {"threads", out["threads"]},
  };
  // Python 2 strings are bytes, and corrupt memory is anything: never let text stop the output.
  fmt::print("{}\n", document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

void print_text(const CommandLine& line, const CoreTarget& target,
                const cpython::ProcessStacks& stacks) {
  for (const auto& warning : all_warnings(target, stacks))
    fmt::print(stderr, "coreanalyze: warning: {}\n", warning);
  for (const auto& note : stacks.notes) fmt::print(stderr, "coreanalyze: note: {}\n", note);
  const ProcessInfo& process = target.process();
  fmt::print("Process {} ({}), Python {} ({})\n\n", process.pid, process.command,
             stacks.version.text(), stacks.version_source);
  report::FileSourceReader sources(line.core.sysroot);
  report::TextStyle style;
  style.color = line.color;
  fmt::print("{}", report::format_process(stacks, &sources, style));
}

}  // namespace

int main(int argc, char** argv) {
  CommandLine line;
  if (auto exit_code = parse(argc, argv, line)) return *exit_code;

  auto target = CoreTarget::open(line.core);
  if (!target) {
    fmt::print(stderr, "coreanalyze: {}\n", target.error().describe());
    return kExitBadInput;
  }
  cpython::AnalyzeOptions options;
  options.forced_version = line.python;
  options.missing_binaries_remedy = "try --exe, --sysroot or --lib-path";
  RecordingTarget recording(**target);
  const cpython::Target& analyzed =
      line.snapshot_path ? static_cast<const cpython::Target&>(recording) : **target;
  auto stacks = cpython::analyze(analyzed, options);
  if (stacks && line.snapshot_path) {
    if (auto written = write_snapshot(*line.snapshot_path, (*target)->core(), recording); !written) {
      fmt::print(stderr, "coreanalyze: {}\n", written.error().describe());
      return kExitBadInput;
    }
    fmt::print(stderr, "coreanalyze: wrote snapshot {} ({} pages)\n", *line.snapshot_path,
               recording.pages().size());
  }
  if (!stacks) {
    // One line: the reason, with the first problem that may explain it.
    std::string because;
    if (!(*target)->warnings().empty()) because = "; " + (*target)->warnings().front();
    fmt::print(stderr, "coreanalyze: {}{}\n", stacks.error().describe(), because);
    return stacks.error().kind == ErrorKind::kInvalidInput ? kExitWrongLayout : kExitNoInterpreter;
  }
  if (line.json) {
    print_json(line, **target, *stacks);
  } else {
    print_text(line, **target, *stacks);
  }
  return stacks->partial() ? kExitPartial : kExitSuccess;
}
