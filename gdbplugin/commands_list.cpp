// py-list: source lines around the selected Python frame's line, in libpython.py's shape
// ("%4s    %s", the current line marked with '>').
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "base/parse_number.h"
#include "base/target_named_file.h"
#include "gdbplugin/analysis_cache.h"
#include "gdbplugin/commands.h"
#include "gdbplugin/python_error.h"
#include "gdbplugin/selected_frame.h"

namespace hangpy::gdbplugin {
namespace {

constexpr int kContext = 5;          // lines shown on each side of the current line
constexpr int kLinesFromStart = 10;  // `py-list N` shows N .. N+10, like libpython
constexpr size_t kMaxLines = 1 << 20;

struct LineRange {
  int first = 0;  // 0: around the current line
  int last = 0;
};

LineRange parse_range(std::string_view argument) {
  static const std::regex kStart(R"(^\s*(\d+)\s*$)");
  static const std::regex kStartEnd(R"(^\s*(\d+)\s*,\s*(\d+)\s*$)");
  std::string text(argument);
  std::smatch match;
  if (text.find_first_not_of(" \t") == std::string::npos) return {};
  auto line_number = [](const std::ssub_match& digits) {
    // Leave room for first + kLinesFromStart.
    auto value = parse_decimal<int>(digits.str());
    if (!value || *value > (1 << 30)) throw UserError("py-list: line number out of range");
    return *value;
  };
  if (std::regex_match(text, match, kStart)) {
    int first = line_number(match[1]);
    return {first, first + kLinesFromStart};
  }
  if (std::regex_match(text, match, kStartEnd)) return {line_number(match[1]), line_number(match[2])};
  throw UserError("usage: py-list [START | START,END]");
}

void py_list(std::string_view argument) {
  LineRange range = parse_range(argument);
  auto selected = selected_python_frame(AtCallLine::kRefuse);
  if (!selected) return;
  const cpython::PythonFrame& frame = *selected->frame;
  if (!frame.line) {
    gdb_write("Unable to read python frame line number\n");
    return;
  }
  int current = *frame.line;
  if (range.first == 0) range = {current - kContext, current + kContext};
  range.first = std::max(range.first, 1);

  // The file name is the inferior's: an untrusted path (a FIFO, /dev/zero, a file its owner could
  // not read), opened and read as the text report does (report/source_reader.h).
  if (auto opened = open_target_file("", frame.file); !opened) {
    gdb_write(fmt::format("Unable to open {}: {}\n", frame.file, opened.error().message));
    return;
  }
  report::FileSourceReader& sources = Session::instance().sources();
  std::string text;
  for (int number = range.first; number <= range.last; ++number) {
    std::optional<std::string> line = sources.raw_line(frame.file, number);
    if (!line) break;
    std::string label = (number == current ? ">" : "") + std::to_string(number);
    text += fmt::format("{:>4}    {}\n", label, *line);
    if (static_cast<size_t>(number - range.first) > kMaxLines) break;
  }
  if (text.empty() && !sources.withheld().empty())
    text = fmt::format("Not listing {}: the process could not read it itself\n", frame.file);
  gdb_write(text);
}

const CommandList kCommands{
    {"py-list", "COMMAND_FILES",
     "List the Python source around the selected Python frame's current line.\n"
     "Usage: py-list            lines around the current line (marked with '>')\n"
     "       py-list START      lines START to START+10\n"
     "       py-list START,END  lines START to END\n"
     "py-up and py-down select the frame; works in `thread apply all`.",
     py_list},
};

}  // namespace
}  // namespace hangpy::gdbplugin
