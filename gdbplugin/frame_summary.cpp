#include "gdbplugin/frame_summary.h"

#include <fmt/format.h>

namespace hangpy::gdbplugin {
namespace {

std::string strip(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n\f\v");
  if (first == std::string::npos) return {};
  size_t last = text.find_last_not_of(" \t\r\n\f\v");
  return text.substr(first, last - first + 1);
}

}  // namespace

std::string frame_summary(const cpython::PythonFrame& frame,
                          const cpython::VariableReader& variables) {
  std::string line = frame.line ? std::to_string(*frame.line) : "?";
  std::string text = fmt::format("Frame 0x{:x}, for file {}, line {}, in {} (", frame.address,
                                 frame.file, line, frame.function);
  // One repr for the whole line, as libpython writes a frame: an object one local's repr wrote
  // is `<...>` in the next ones'.
  if (auto locals = variables.locals_as_one_repr(frame)) {
    bool first = true;
    for (const cpython::Variable& variable : *locals) {
      if (!first) text += ", ";
      first = false;
      text += variable.name + "=" + variable.repr;
      if (text.size() > kMaxSummaryLength) break;
    }
  } else {
    text += fmt::format("<locals unreadable: {}>", locals.error().describe());
  }
  text += ")";
  if (text.size() > kMaxSummaryLength) text = text.substr(0, kMaxSummaryLength) + "...(truncated)";
  return text;
}

std::string source_line(const cpython::PythonFrame& frame, report::SourceReader& sources) {
  if (!frame.line) return {};
  auto text = sources.line(frame.file, *frame.line);
  if (!text) return {};
  return "    " + strip(*text) + "\n";
}

}  // namespace hangpy::gdbplugin
