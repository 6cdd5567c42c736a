#include "report/json_report.h"
#include "report/repeated_frames.h"

#include "report/process_facts.h"

#include <algorithm>
#include <ctime>

namespace hangpy::report {
namespace {

nlohmann::json optional_int(const std::optional<int>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json frame_to_json(const cpython::PythonFrame& frame) {
  return {
      {"file", frame.file},
      {"line", optional_int(frame.line)},
      {"end_line", optional_int(frame.end_line)},
      {"column", optional_int(frame.column)},
      {"end_column", optional_int(frame.end_column)},
      {"function", frame.function},
      {"qualname", frame.qualname},
      {"first_line", frame.first_line},
      {"is_entry", frame.is_entry},
      {"address", fmt::format("0x{:x}", frame.address)},
  };
}

nlohmann::json thread_to_json(const cpython::PythonThread& thread) {
  nlohmann::json frames = nlohmann::json::array();
  // A recursion's frames past the few shown are null here, not objects: 100,000 frames of one
  // recursion would cost 100 MB as objects. fold_repeated_frames (repeated_frames.h) counts them
  // once the other parts, which find frames by index, are added.
  size_t run = 0;
  const cpython::PythonFrame* previous = nullptr;
  for (auto it = thread.frames.rbegin(); it != thread.frames.rend(); ++it) {
    run = previous && repeats_previous(*it, *previous) ? run + 1 : 1;
    previous = &*it;
    frames.push_back(run <= kRepeatsShown ? frame_to_json(*it) : nlohmann::json(nullptr));
  }
  auto optional_json = [](const auto& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  return {
      {"interpreter_id", thread.interpreter_id},
      {"thread_id", thread.thread_id},
      {"native_thread_id", optional_json(thread.native_thread_id)},
      {"namespace_thread_id", optional_json(thread.namespace_thread_id)},
      {"name", optional_json(thread.name)},
      {"holds_gil", thread.holds_gil},
      {"thread_state", fmt::format("0x{:x}", thread.thread_state)},
      {"frames", std::move(frames)},
      {"error", thread.error ? nlohmann::json(thread.error->describe()) : nlohmann::json(nullptr)},
  };
}

// "2026-11-26T12:00:01.250Z"
std::string utc_text(double unix_seconds) {
  const auto whole = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  if (gmtime_r(&whole, &utc) == nullptr) return {};
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  const int milliseconds = static_cast<int>((unix_seconds - static_cast<double>(whole)) * 1000);
  return fmt::format("{}.{:03d}Z", text, std::clamp(milliseconds, 0, 999));
}

// The time axis: when the look was taken and how much CPU time (and I/O) each thread had used by
// then, so that two looks at the same process can be compared later, anywhere (coreanalyze diff).
nlohmann::json look_to_json(const AnalysedInput& input) {
  nlohmann::json threads = nlohmann::json::array();
  double total = 0;
  bool every_cpu_known = !input.threads.empty();
  for (const cpython::NativeThread& thread : input.threads) {
    if (thread.cpu_seconds) total += *thread.cpu_seconds;
    else every_cpu_known = false;
    threads.push_back({{"native_thread_id", thread.lwp},
                       {"cpu_seconds", thread.cpu_seconds ? nlohmann::json(*thread.cpu_seconds) : nullptr},
                       {"io_bytes", thread.io_bytes ? nlohmann::json(*thread.io_bytes) : nullptr},
                       {"run_delay_seconds", thread.run_delay_seconds ? nlohmann::json(*thread.run_delay_seconds) : nullptr},
                       {"state", thread.run_state ? nlohmann::json(std::string(1, *thread.run_state)) : nullptr}});
  }
  const auto& taken_at = input.process.taken_at;
  return {{"taken_at", taken_at ? nlohmann::json(utc_text(*taken_at)) : nullptr},
          {"unix_time", taken_at ? nlohmann::json(*taken_at) : nullptr},
          {"cpu_seconds", every_cpu_known ? nlohmann::json(total) : nullptr},
          {"threads", std::move(threads)}};
}

}  // namespace

nlohmann::json process_document(const AnalysedInput& input, const cpython::ProcessStacks& stacks) {
  nlohmann::json threads = nlohmann::json::array();
  for (const auto& thread : stacks.threads) threads.push_back(thread_to_json(thread));
  nlohmann::json without_python = nullptr;
  if (stacks.threads_without_python) {
    without_python = nlohmann::json::array();
    for (int64_t lwp : *stacks.threads_without_python)
      without_python.push_back({{"native_thread_id", lwp}});
  }
  const cpython::ProcessInfo& process = input.process;
  std::vector<std::string> warnings = input.warnings;
  warnings.insert(warnings.end(), stacks.warnings.begin(), stacks.warnings.end());
  nlohmann::json document = {
      {"hangpy_version", HANGPY_VERSION},
      {"core", input.core},
      {"process",
       {
           {"pid", process.pid},
           {"command", process.command},
           {"arguments", process.arguments},
           {"executable", process.executable},
           {"signal", process.signal ? nlohmann::json(*process.signal) : nlohmann::json(nullptr)},
           {"python_version", stacks.version.text()},
           {"version_source", stacks.version_source},
           {"layout", stacks.layout ? std::string(stacks.layout->name) : std::string()},
           {"layout_source", stacks.layout_source},
           {"layout_source_tag",
            stacks.layout ? std::string(stacks.layout->source_tag) : std::string()},
           {"modules", input.modules},
       }},
      {"warnings", std::move(warnings)},
      {"notes", stacks.notes},
      {"threads", std::move(threads)},
      {"threads_without_python", std::move(without_python)},
      {"look", look_to_json(input)},
  };
  add_process_facts(document["process"], process, stacks);
  add_process_labels(document["process"], process, input.environment, &stacks);
  return document;
}

}  // namespace hangpy::report
