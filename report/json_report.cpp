#include "report/json_report.h"

#include "report/process_facts.h"

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
  for (auto it = thread.frames.rbegin(); it != thread.frames.rend(); ++it)
    frames.push_back(frame_to_json(*it));
  auto optional_json = [](const auto& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  return {
      {"interpreter_id", thread.interpreter_id},
      {"thread_id", thread.thread_id},
      {"native_thread_id", optional_json(thread.native_thread_id)},
      {"name", optional_json(thread.name)},
      {"holds_gil", thread.holds_gil},
      {"thread_state", fmt::format("0x{:x}", thread.thread_state)},
      {"frames", std::move(frames)},
      {"error", thread.error ? nlohmann::json(thread.error->describe()) : nlohmann::json(nullptr)},
  };
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
  };
  add_process_facts(document["process"], process, stacks);
  add_process_labels(document["process"], process, input.environment, &stacks);
  return document;
}

}  // namespace hangpy::report
