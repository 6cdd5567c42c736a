#include "jobs/triage_analysis.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "base/last_line.h"
#include "base/child_process.h"
#include "base/exit_codes.h"

namespace hangpy::jobs {
namespace {

// A document from another machine or a hostile core: every string kept of it is cut to
// triage::kMaxTriageString, and the input named when one was. `text` is parsed in place.
void parse_document(TriageOutcome& outcome, std::string& text, const std::string& name,
                    triage::ParseScratch* scratch = nullptr) {
  size_t cut = 0;
  auto records = triage::records_from_text(text, name, cut, scratch);
  if (cut > 0) {
    outcome.warnings.push_back(fmt::format("{}: {} string(s) longer than {} bytes cut", name, cut,
                                           triage::kMaxTriageString));
  }
  if (!records) {
    outcome.error = records.error().describe();
    outcome.exit_code = kExitBadInput;
    return;
  }
  if (records->empty()) {  // "[]": a document of no process
    outcome.error = fmt::format("{}: no process in the document", name);
    outcome.exit_code = kExitBadInput;
    return;
  }
  outcome.processes = std::move(*records);
}

// Read whole and parsed in place. Past kMaxDocumentBytes (a document no process makes: a rank
// with every local of 10,000 threads is a few MB) it is refused, so that memory stays bounded.
// What a worker keeps from one input to the next: the document's text (its capacity) and the
// parse's memory, so that 10,000 documents cost no malloc and first-touch page faults each. Not
// thread_local: one with a destructor needs glibc 2.18's __cxa_thread_atexit_impl, and the
// portable build's floor is 2.17.
struct WorkerScratch {
  std::string text;
  triage::ParseScratch parse;
};

TriageOutcome read_json_input(const TriageInput& input, WorkerScratch& scratch) {
  constexpr size_t kMaxDocumentBytes = 256 << 20;
  TriageOutcome outcome;
  const int fd = open(input.path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat facts {};
  if (fd < 0 || fstat(fd, &facts) != 0) {
    outcome.error = fmt::format("{}: {}", input.name, std::strerror(errno));
    outcome.exit_code = kExitBadInput;
    if (fd >= 0) close(fd);
    return outcome;
  }
  if (static_cast<uint64_t>(facts.st_size) > kMaxDocumentBytes) {
    close(fd);
    outcome.error = fmt::format("{}: {} bytes, larger than any coreanalyze --json document ({} MiB at most)",
                                input.name, facts.st_size, kMaxDocumentBytes >> 20);
    outcome.exit_code = kExitBadInput;
    return outcome;
  }
  std::string& text = scratch.text;
  text.resize(static_cast<size_t>(facts.st_size));
  size_t have = 0;
  while (have < text.size()) {
    ssize_t got = read(fd, text.data() + have, text.size() - have);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    have += static_cast<size_t>(got);
  }
  close(fd);
  text.resize(have);
  parse_document(outcome, text, input.name, &scratch.parse);
  return outcome;
}

// coreanalyze --json on one core or PID in a child (base/child_process.h); its stdout is the
// document, its stderr's last line the reason when it fails.
TriageOutcome analyse_in_child(const TriageInput& input, const std::vector<std::string>& child_arguments,
                               triage::ParseScratch& parse) {
  TriageOutcome outcome;
  std::vector<std::string> arguments = {"coreanalyze", "--json"};
  arguments.insert(arguments.end(), child_arguments.begin(), child_arguments.end());
  if (input.kind == TriageInput::Kind::kPid) {
    arguments.push_back("--pid");
    arguments.push_back(std::to_string(input.pid));
  } else {
    // A path that starts with '-' would read as an option.
    arguments.push_back(input.path.starts_with("-") ? "./" + input.path : input.path);
  }
  ChildCommand command(std::move(arguments), std::nullopt, true, std::string("/dev/null"));
  command.program = "/proc/self/exe";
  // No time limit of its own: a live process's analysis has --max-stop, a core's reads are
  // bounded; the triage's user ends a triage that takes too long.
  ChildResult ran = run_child(command, std::chrono::hours(24 * 365));
  if (!ran.started) {
    outcome.error = fmt::format("{}: cannot start coreanalyze: {}", input.name, ran.start_error);
    outcome.exit_code = kExitBadInput;
    return outcome;
  }
  if (ran.signal != 0) {
    outcome.error = fmt::format("{}: the analysis died of signal {}", input.name, ran.signal);
    outcome.exit_code = kExitBadInput;
    return outcome;
  }
  std::string document = std::move(ran.output);  // parsed in place: no copy of a rank's document
  const std::string& said = ran.errors;
  outcome.exit_code = ran.exit_code;
  // A partial result (5) or a snapshot not written (7) still printed the document.
  if (!document.empty() && (outcome.exit_code == kExitSuccess || outcome.exit_code == kExitPartial ||
                            outcome.exit_code == kExitSnapshotFailed)) {
    parse_document(outcome, document, input.name, &parse);
    if (outcome.processes.empty() && outcome.error.empty())
      outcome.error = fmt::format("{}: no process could be read", input.name);
    return outcome;
  }
  std::string reason = last_line(said);
  const std::string prefix = "coreanalyze: ";
  if (reason.starts_with(prefix)) reason.erase(0, prefix.size());
  outcome.error = fmt::format("{}: {}", input.name, reason.empty() ? fmt::format("exit code {}", outcome.exit_code) : reason);
  return outcome;
}

TriageOutcome analyse_one(const TriageInput& input, const std::vector<std::string>& child_arguments,
                          WorkerScratch& scratch) {
  if (input.kind == TriageInput::Kind::kJson) return read_json_input(input, scratch);
  return analyse_in_child(input, child_arguments, scratch.parse);
}

void draw_progress(size_t done, size_t total) {
  constexpr int kBarWidth = 30;
  const int filled = total ? static_cast<int>(kBarWidth * done / total) : kBarWidth;
  fmt::print(stderr, "\r\033[Kcoreanalyze: triage [{:=<{}}{: <{}}] {}/{} inputs", "", filled, "",
             kBarWidth - filled, done, total);
  std::fflush(stderr);
}

}  // namespace

std::vector<TriageOutcome> analyse_triage_inputs(const std::vector<TriageInput>& inputs,
                                                 const TriageAnalysisOptions& options,
                                                 std::vector<triage::ProcessRecord>* first_processes) {
  std::vector<TriageOutcome> outcomes(inputs.size());
  if (first_processes != nullptr) {
    first_processes->clear();
    first_processes->resize(inputs.size());
  }
  unsigned jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<size_t>(jobs, inputs.size()));
  std::atomic<size_t> next{0}, done{0};
  triage::SharingPool sharing;  // the records keep what they share after it goes
  auto work = [&] {
    WorkerScratch scratch;
    scratch.parse.sharing = &sharing;
    for (size_t i = next++; i < inputs.size(); i = next++) {
      outcomes[i] = analyse_one(inputs[i], options.child_arguments, scratch);
      std::vector<triage::ProcessRecord>& processes = outcomes[i].processes;
      outcomes[i].process_count = processes.size();
      if (first_processes != nullptr && !processes.empty()) {
        (*first_processes)[i] = std::move(processes.front());
        processes.erase(processes.begin());
        if (processes.empty()) processes.shrink_to_fit();
      }
      done++;
    }
  };
  std::vector<std::thread> workers;
  for (unsigned j = 0; j < jobs; ++j) workers.emplace_back(work);
  const bool progress = options.progress && isatty(STDERR_FILENO) != 0 && inputs.size() > 1;
  if (progress) {
    while (done.load() < inputs.size()) {
      draw_progress(done.load(), inputs.size());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  for (std::thread& worker : workers) worker.join();
  if (progress) fmt::print(stderr, "\r\033[K");
  return outcomes;
}

}  // namespace hangpy::jobs
