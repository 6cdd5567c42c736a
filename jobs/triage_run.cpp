#include "jobs/triage_run.h"

#include "base/printable.h"

#include <chrono>
#include <iostream>
#include <thread>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "base/parse_number.h"
#include "base/exit_codes.h"
#include "jobs/graphviz.h"
#include "base/output_file.h"
#include "jobs/triage_analysis.h"
#include "jobs/triage_inputs.h"
#include "report/triage_dot.h"
#include "report/triage_html.h"
#include "report/triage_json.h"
#include "report/triage_text.h"
#include "triage/merge.h"
#include "triage/second_look.h"

namespace po = boost::program_options;

namespace hangpy::jobs {
namespace {

struct TriageLine {
  std::vector<std::string> paths;
  std::vector<int> pids;
  bool json = false;
  std::optional<std::string> html, svg, dot;
  std::optional<double> again_after;  // --again-after: a second look at the PIDs, this much later
  TriageAnalysisOptions analysis;
};

po::options_description triage_options() {
  po::options_description options("Options");
  options.add_options()
      ("help,h", "print this help and exit")
      ("pid", po::value<std::vector<std::string>>()->composing()->value_name("PID"),
       "also analyse the running process PID (repeat, or PID,PID,...)")
      ("json", "print the triage as JSON (schema: docs/json-schema.md) instead of text")
      ("html", po::value<std::string>()->value_name("FILE"),
       "write the merged tree as a self-contained HTML page")
      ("svg", po::value<std::string>()->value_name("FILE"),
       "write the merged tree as SVG (needs Graphviz's dot)")
      ("dot", po::value<std::string>()->value_name("FILE"),
       "write the merged tree in Graphviz's DOT language (as STAT's)")
      ("native", "analyse cores and PIDs with --native and merge the native stacks too")
      ("no-locals", "analyse cores and PIDs without their locals (the verdict then cannot say which "
                    "of the program's variables set the odd ones apart)")
      ("python", po::value<std::string>()->value_name("X.Y"), "passed to each analysis")
      ("sysroot", po::value<std::string>()->value_name("DIR"), "cores: passed to each analysis")
      ("lib-path", po::value<std::string>()->value_name("DIRS"), "cores: passed to each analysis")
      ("nonblocking", "with --pid: read the processes without stopping them")
      ("max-stop", po::value<std::string>()->value_name("MS"),
       "with --pid: passed to each analysis")
      ("again-after", po::value<std::string>()->value_name("SECONDS"),
       "with --pid: look at the processes again this much later and say of each group whether it "
       "is stuck, busy or slow (one look cannot tell)")
      ("jobs,j", po::value<std::string>()->value_name("N"),
       "analyse N inputs at a time (default: the number of processors)");
  return options;
}

// help2man builds coreanalyze-triage.1 from this text (packaging/CMakeLists.txt): no option's
// text starts with "--".
void print_triage_usage(const po::options_description& options) {
  std::cout << "Usage: coreanalyze triage INPUT... [--pid PID...] [options]\n"
               "Analyses many processes of one job in parallel and merges their stacks: a verdict\n"
               "naming the odd processes out first, then the merged tree (with rank sets) and each\n"
               "group's stacks. An INPUT is a core (any form coreanalyze reads), a coreanalyze\n"
               "--json result (gathered on other nodes), or a directory of them.\n\n"
            << options << "\n" << kExitCodesHelp;
}

std::optional<int> parse_triage_line(int argc, char** argv, TriageLine& line) {
  po::options_description visible = triage_options();
  po::options_description all;
  all.add(visible).add_options()("input", po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    fmt::print(stderr, "coreanalyze triage: {} (see coreanalyze triage --help)\n", error.what());
    return kExitUsage;
  }
  if (vm.count("help")) {
    print_triage_usage(visible);
    return kExitSuccess;
  }
  if (vm.count("input")) line.paths = vm["input"].as<std::vector<std::string>>();
  if (vm.count("pid")) {
    if (auto bad = append_pid_lists(vm["pid"].as<std::vector<std::string>>(), line.pids)) {
      fmt::print(stderr, "coreanalyze triage: --pid wants a process id, not '{}'\n", *bad);
      return kExitUsage;
    }
  }
  if (line.paths.empty() && line.pids.empty()) {
    fmt::print(stderr, "coreanalyze triage: no inputs (usage: coreanalyze triage INPUT... [--pid PID...])\n");
    return kExitUsage;
  }
  line.json = vm.count("json") > 0;
  if (vm.count("html")) line.html = vm["html"].as<std::string>();
  if (vm.count("svg")) line.svg = vm["svg"].as<std::string>();
  if (vm.count("dot")) line.dot = vm["dot"].as<std::string>();
  if (vm.count("jobs")) {
    auto jobs = parse_decimal<int>(vm["jobs"].as<std::string>());
    if (!jobs || *jobs < 1 || *jobs > 1024) {
      fmt::print(stderr, "coreanalyze triage: --jobs wants a number from 1 to 1024\n");
      return kExitUsage;
    }
    line.analysis.jobs = static_cast<unsigned>(*jobs);
  }
  std::vector<std::string>& forwarded = line.analysis.child_arguments;
  if (vm.count("native")) forwarded.push_back("--native");
  if (!vm.count("no-locals")) forwarded.push_back("--locals");
  for (const char* option : {"python", "sysroot", "lib-path"}) {
    if (vm.count(option)) forwarded.push_back(fmt::format("--{}={}", option, vm[option].as<std::string>()));
  }
  // Options of one kind of input only: coreanalyze refuses them with the other.
  if (!line.pids.empty() && (vm.count("sysroot") || vm.count("lib-path")) ) {
    fmt::print(stderr, "coreanalyze triage: --sysroot and --lib-path are for cores; give them in a "
               "triage of cores alone\n");
    return kExitUsage;
  }
  if (vm.count("nonblocking") || vm.count("max-stop")) {
    if (!line.paths.empty()) {
      fmt::print(stderr, "coreanalyze triage: --nonblocking and --max-stop go with --pid alone\n");
      return kExitUsage;
    }
    if (vm.count("nonblocking")) forwarded.push_back("--nonblocking");
    if (vm.count("max-stop")) forwarded.push_back("--max-stop=" + vm["max-stop"].as<std::string>());
  }
  if (vm.count("again-after")) {
    const std::string text = vm["again-after"].as<std::string>();
    char* end = nullptr;
    const double seconds = std::strtod(text.c_str(), &end);
    if (line.pids.empty() || !line.paths.empty() || text.empty() || *end != '\0' || !(seconds > 0) || seconds > 3600) {
      fmt::print(stderr, "coreanalyze triage: --again-after wants --pid alone and a number of seconds up to "
                 "3600, not '{}'\n", text);
      return kExitUsage;
    }
    line.again_after = seconds;
  }
  line.analysis.progress = true;
  return std::nullopt;
}

// Writes one picture; false (said on stderr) when it could not be written.
bool write_output(const std::string& path, const std::string& text, const std::vector<std::string>& inputs) {
  auto written = check_not_an_input(path, inputs);
  if (written) written = write_file_atomically(path, [&](std::ostream& out) { out << text; });
  if (!written) {
    fmt::print(stderr, "coreanalyze triage: {} not written: {}\n", path, written.error().describe());
    return false;
  }
  return true;
}

// --again-after: the PIDs looked at again, each group of the triage called stuck, busy or slow.
std::vector<std::string> take_second_look(const TriageLine& line, const triage::Triage& triage) {
  if (!line.again_after) return {};
  std::this_thread::sleep_for(std::chrono::duration<double>(*line.again_after));
  std::vector<std::string> notes;
  auto inputs = gather_triage_inputs({}, line.pids, notes);
  if (!inputs) return {"the second look failed: " + inputs.error().describe()};
  std::vector<triage::ProcessRecord> later;
  for (TriageOutcome& outcome : analyse_triage_inputs(*inputs, line.analysis))
    for (auto& process : outcome.processes) later.push_back(std::move(process));
  return triage::second_look_lines(triage, triage::motions_since(triage, later));
}

}  // namespace

int run_triage(int argc, char** argv) {
  TriageLine line;
  if (auto exit_code = parse_triage_line(argc, argv, line)) return *exit_code;
  std::vector<std::string> notes;
  auto inputs = gather_triage_inputs(line.paths, line.pids, notes);
  for (const std::string& note : notes) fmt::print(stderr, "coreanalyze triage: note: {}\n", note);
  if (!inputs) {
    fmt::print(stderr, "coreanalyze triage: {}\n", inputs.error().describe());
    return kExitBadInput;
  }
  // Each input's first process is made in `processes` (see analyse_triage_inputs): at 100,000
  // ranks a second copy of every record's fixed part was 40 MB.
  std::vector<triage::ProcessRecord> processes;
  std::vector<TriageOutcome> outcomes = analyse_triage_inputs(*inputs, line.analysis, &processes);
  std::vector<bool> gave_none(outcomes.size(), false);
  bool more_than_one = false;
  int first_failure = kExitSuccess;
  size_t failed = 0;
  for (size_t index = 0; index < outcomes.size(); ++index) {
    TriageOutcome& outcome = outcomes[index];
    for (const std::string& warning : outcome.warnings)
      fmt::print(stderr, "coreanalyze triage: warning: {}\n", for_terminal(warning));
    more_than_one |= !outcome.processes.empty();
    if (outcome.process_count == 0) {
      gave_none[index] = true;
      failed++;
      fmt::print(stderr, "coreanalyze triage: left out {}\n", for_terminal(outcome.error));
      if (first_failure == kExitSuccess) first_failure = outcome.exit_code ? outcome.exit_code : kExitBadInput;
      continue;
    }
  }
  if (more_than_one) {  // documents of several processes each: each one's, in input order
    std::vector<triage::ProcessRecord> ordered;
    for (size_t index = 0; index < outcomes.size(); ++index) {
      if (gave_none[index]) continue;
      ordered.push_back(std::move(processes[index]));
      for (auto& process : outcomes[index].processes) ordered.push_back(std::move(process));
    }
    processes = std::move(ordered);
  } else {
    size_t kept = 0;
    for (size_t index = 0; index < processes.size(); ++index)
      if (!gave_none[index] && kept++ != index) processes[kept - 1] = std::move(processes[index]);
    processes.erase(processes.begin() + static_cast<std::ptrdiff_t>(kept), processes.end());
  }
  // The records are all that is read from here on: at 100,000 ranks the inputs' names and the
  // outcomes are 25 MB more.
  const size_t input_count = inputs->size();
  std::vector<TriageOutcome>().swap(outcomes);
  std::vector<TriageInput>().swap(*inputs);
  if (processes.empty()) {
    fmt::print(stderr, "coreanalyze triage: none of the {} inputs could be analysed\n", input_count);
    return first_failure;
  }
  const triage::Triage triage = triage::merge(std::move(processes));
  const std::vector<std::string> second_look = take_second_look(line, triage);
  if (line.json) {
    nlohmann::json document = report::triage_document(triage);
    document["left_out"] = failed;
    if (line.again_after) document["second_look"] = {{"seconds_later", *line.again_after}, {"groups", second_look}};
    fmt::print("{}\n", json_for_terminal(document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)));
  } else {
    fmt::print("{}", report::format_triage(triage));
    if (failed > 0) fmt::print("\n{} of {} inputs left out (see the messages above)\n", failed, input_count);
    if (line.again_after) {
      fmt::print("\nA second look, {} s later:\n", *line.again_after);
      for (const std::string& group : second_look) fmt::print("  {}\n", for_terminal(group));
    }
  }
  std::vector<std::string> input_paths = line.paths;
  bool pictures_written = true;
  std::string dot_text;
  if (line.dot || line.svg) dot_text = report::triage_dot(triage);
  if (line.dot) pictures_written &= write_output(*line.dot, dot_text, input_paths);
  if (line.html) pictures_written &= write_output(*line.html, report::triage_html(triage), input_paths);
  if (line.svg) {
    if (auto ok = check_not_an_input(*line.svg, input_paths); !ok) {
      fmt::print(stderr, "coreanalyze triage: {} not written: {}\n", *line.svg, ok.error().describe());
      pictures_written = false;
    } else if (auto drawn = write_svg_with_dot(dot_text, *line.svg); !drawn) {
      fmt::print(stderr, "coreanalyze triage: {}\n", drawn.error().describe());
      pictures_written = false;
    }
  }
  if (!pictures_written) return kExitSnapshotFailed;
  return failed > 0 ? kExitPartial : kExitSuccess;
}

}  // namespace hangpy::jobs
