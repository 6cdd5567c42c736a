#include "jobs/diff_command.h"

#include <iostream>
#include <set>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/exit_codes.h"
#include "base/printable.h"
#include "jobs/look_records.h"
#include "triage/second_look.h"

namespace po = boost::program_options;

namespace hangpy::jobs {
namespace {

struct DiffLine {
  std::string first, second;
  bool json = false;
};

std::optional<int> parse_diff_line(int argc, char** argv, DiffLine& line) {
  po::options_description visible("Options");
  visible.add_options()
      ("help,h", "print this help and exit")
      ("json", "print the comparison as JSON");
  po::options_description all;
  all.add(visible).add_options()("look", po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add("look", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    fmt::print(stderr, "coreanalyze diff: {} (see --help)\n", error.what());
    return kExitUsage;
  }
  if (vm.count("help")) {
    std::cout << "Usage: coreanalyze diff FIRST SECOND [--json]\n"
                 "Compares two looks at the same job: two `coreanalyze collect` directories, two\n"
                 "--json results, or two (snapshot) cores of each process. Each process and thread\n"
                 "is moved (other frames, another line, changed locals, data read or written), busy\n"
                 "(the same frames, burning CPU), still (the same frames, no CPU), new or gone; then\n"
                 "each group of processes of the first look is called stuck, busy or slow. Processes\n"
                 "are matched by host and PID. CPU time is compared where both looks say when they\n"
                 "were taken (--json results and snapshot cores of this version do).\n\n"
              << visible << "\n"
              << "Exit codes: 0 compared, 2 usage error, 3 a look could not be read.\n";
    return kExitSuccess;
  }
  const auto looks = vm.count("look") ? vm["look"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (looks.size() != 2) {
    fmt::print(stderr, "coreanalyze diff: give two looks (directories, JSON results or cores), not {}\n",
               looks.size());
    return kExitUsage;
  }
  line.first = looks[0];
  line.second = looks[1];
  line.json = vm.count("json") > 0;
  return std::nullopt;
}

nlohmann::json thread_json(const triage::ThreadMotion& thread) {
  return {{"native_thread_id", thread.native_thread_id ? nlohmann::json(*thread.native_thread_id) : nullptr},
          {"name", thread.name ? nlohmann::json(*thread.name) : nullptr},
          {"motion", triage::motion_name(thread.motion)},
          {"before", thread.before},
          {"after", thread.after},
          {"cpu_share", thread.cpu_share ? nlohmann::json(*thread.cpu_share) : nullptr},
          {"why", thread.why}};
}

std::string thread_text(const triage::ThreadMotion& thread) {
  const std::string name = thread.name ? *thread.name : std::string("?");
  const std::string id = thread.native_thread_id ? fmt::format(" (LWP {})", *thread.native_thread_id) : "";
  std::string text = fmt::format("    Thread \"{}\"{}: {}: {}", name, id, triage::motion_name(thread.motion), thread.why);
  if (thread.motion == triage::Motion::kMoved && thread.before != thread.after)
    text += fmt::format("; was in {}, now in {}", thread.before, thread.after);
  else if (!thread.after.empty()) text += fmt::format("; in {}", thread.after);
  else if (!thread.before.empty()) text += fmt::format("; was in {}", thread.before);
  return text;
}

}  // namespace

int run_diff(int argc, char** argv) {
  DiffLine line;
  if (auto exit_code = parse_diff_line(argc, argv, line)) return *exit_code;
  TriageAnalysisOptions options;
  options.child_arguments = {"--locals"};  // a changed local is progress
  LookRecords first = read_look({line.first}, options);
  LookRecords second = read_look({line.second}, options);
  for (const auto& [look, name] : {std::pair{&first, &line.first}, std::pair{&second, &line.second}}) {
    for (const std::string& problem : look->problems)
      fmt::print(stderr, "coreanalyze diff: note: {}: {}\n", for_terminal(*name), for_terminal(problem));
    if (look->processes.empty()) {
      fmt::print(stderr, "coreanalyze diff: {}: no process could be read\n", for_terminal(*name));
      return kExitBadInput;
    }
  }
  const triage::Triage triage = triage::merge(first.processes);
  const auto motions = triage::motions_since(triage, second.processes);
  std::set<std::string> in_first;
  for (const auto& process : triage.processes) in_first.insert(triage::process_key(process));

  nlohmann::json document;
  document["processes"] = nlohmann::json::array();
  std::string text;
  for (size_t index = 0; index < triage.processes.size(); ++index) {
    const auto& process = triage.processes[index];
    nlohmann::json entry = {{"process", process_label(process)},
                            {"host", process.labels.host.value_or("")},
                            {"pid", process.labels.pid ? nlohmann::json(*process.labels.pid) : nullptr}};
    auto found = motions.find(static_cast<int>(index));
    if (found == motions.end()) {
      entry["motion"] = "gone";
      text += fmt::format("{}: gone: not in the second look\n", process_label(process));
    } else {
      const triage::ProcessMotion& motion = found->second;
      entry["motion"] = triage::motion_name(motion.motion);
      entry["seconds"] = motion.seconds ? nlohmann::json(*motion.seconds) : nullptr;
      entry["threads"] = nlohmann::json::array();
      text += fmt::format("{}: {}{}\n", process_label(process), triage::motion_name(motion.motion),
                          motion.seconds ? fmt::format(" in {:.1f} s", *motion.seconds) : std::string());
      for (const auto& thread : motion.threads) {
        entry["threads"].push_back(thread_json(thread));
        text += thread_text(thread) + "\n";
      }
    }
    document["processes"].push_back(std::move(entry));
  }
  for (const auto& process : second.processes) {
    if (in_first.contains(triage::process_key(process))) continue;
    document["processes"].push_back({{"process", process_label(process)}, {"motion", "new"},
                                     {"host", process.labels.host.value_or("")},
                                     {"pid", process.labels.pid ? nlohmann::json(*process.labels.pid) : nullptr}});
    text += fmt::format("{}: new: not in the first look; in {}\n", process_label(process),
                        triage::python_places(process));
  }
  const std::vector<std::string> groups = triage::second_look_lines(triage, motions);
  document["groups"] = groups;
  if (line.json) {
    fmt::print("{}\n", json_for_terminal(document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)));
    return kExitSuccess;
  }
  // Each line escaped alone: for_terminal would show the line ends themselves as \x0a.
  for (const std::string& group : groups) fmt::print("{}\n", for_terminal(group));
  fmt::print("\n");
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    fmt::print("{}\n", for_terminal(text.substr(start, end - start)));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return kExitSuccess;
}

}  // namespace hangpy::jobs
