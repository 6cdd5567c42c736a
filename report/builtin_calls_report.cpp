#include "report/builtin_calls_report.h"

#include "base/printable.h"

#include <fmt/format.h>


namespace hangpy::report {

std::string format_call_notes(const native::CallNotes& notes, int64_t lwp, size_t index) {
  auto found = notes.find({lwp, index});
  if (found == notes.end()) return {};
  std::string text;
  for (const std::string& line : found->second) text += fmt::format("       {}\n", for_terminal(line));
  return text;
}

}  // namespace hangpy::report
