#include "report/json_report.h"

namespace hangpy::report {
namespace {

nlohmann::json frame_to_json(const cpython::PythonFrame& frame) {
  return {
      {"file", frame.file},
      {"line", frame.line ? nlohmann::json(*frame.line) : nlohmann::json(nullptr)},
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

nlohmann::json stacks_to_json(const cpython::ProcessStacks& stacks) {
  nlohmann::json threads = nlohmann::json::array();
  for (const auto& thread : stacks.threads) threads.push_back(thread_to_json(thread));
  return {
      {"python_version", stacks.version.text()},
      {"version_source", stacks.version_source},
      {"layout", stacks.layout ? std::string(stacks.layout->name) : std::string()},
      {"layout_source_tag", stacks.layout ? std::string(stacks.layout->source_tag) : std::string()},
      {"layout_source", stacks.layout_source},
      {"notes", stacks.notes},
      {"threads", std::move(threads)},
  };
}

}  // namespace hangpy::report
