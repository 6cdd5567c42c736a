#include "report/locals_report.h"

#include "base/printable.h"
#include "report/repeated_frames.h"

#include <fmt/format.h>

namespace hangpy::report {

std::string format_frame_locals(const cpython::LocalsByFrame& locals, const cpython::PythonFrame& frame) {
  auto found = locals.find(frame.address);
  if (found == locals.end()) return {};
  if (found->second.error) return fmt::format("      <locals unreadable: {}>\n", for_terminal(*found->second.error));
  std::string text;
  for (const cpython::Variable& variable : found->second.variables)
    text += fmt::format("      {} = {}\n", for_terminal(variable.name), for_terminal(variable.repr));
  return text;
}

void add_locals(nlohmann::json& document, const cpython::ProcessStacks& stacks,
                const cpython::LocalsByFrame& locals) {
  nlohmann::json& threads = document["threads"];
  for (size_t i = 0; i < stacks.threads.size() && i < threads.size(); ++i) {
    const auto& frames = stacks.threads[i].frames;
    nlohmann::json& documented = threads[i]["frames"];
    // The document lists frames outermost first; the engine innermost first.
    for (size_t j = 0; j < frames.size() && j < documented.size(); ++j) {
      auto found = locals.find(frames[frames.size() - 1 - j].address);
      if (found == locals.end()) continue;
      nlohmann::json& frame = documented[j];
      if (!frame.is_object()) continue;  // a repeat left out (json_report.h)
      if (found->second.error) {
        frame["locals"] = nullptr;
        frame["locals_error"] = *found->second.error;
        continue;
      }
      nlohmann::json list = nlohmann::json::array();
      for (const cpython::Variable& variable : found->second.variables) {
        list.push_back({{"name", variable.name},
                        {"repr", variable.repr},
                        {"address", fmt::format("0x{:x}", variable.object)}});
      }
      frame["locals"] = std::move(list);
    }
  }
}

}  // namespace hangpy::report
