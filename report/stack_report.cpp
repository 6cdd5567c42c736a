#include "report/stack_report.h"

#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/printable.h"
#include "cpython/eval_groups.h"
#include "report/diagnosis_report.h"
#include "report/repeated_frames.h"
#include "report/source_excerpt.h"

namespace hangpy::report {
namespace {

struct Colors {
  const char* file = "";
  const char* function = "";
  const char* header = "";
  const char* warning = "";
  const char* reset = "";
};

Colors colors_for(const TextStyle& style) {
  if (!style.color) return {};
  return Colors{"\033[32m", "\033[36m", "\033[1m", "\033[33m", "\033[0m"};
}

std::string format_frame(const cpython::PythonFrame& frame, SourceReader* sources,
                         const Colors& c, const TextStyle& style) {
  std::string line = frame.line ? std::to_string(*frame.line) : "?";
  // Names the target gave are escaped for the terminal (base/printable.h), colours are ours.
  std::string text = fmt::format("  File \"{}{}{}\", line {}, in {}{}{}\n", c.file, for_terminal(frame.file),
                                 c.reset, line, c.function,
                                 for_terminal(style.qualified_names ? frame.qualname : frame.function), c.reset);
  return text + format_frame_source(frame, sources, style.context_lines, style.carets);
}

std::string after_frame(const cpython::PythonFrame& frame, const TextStyle& style) {
  return style.after_frame ? style.after_frame(frame) : std::string();
}

// Pieces of a traceback in display order: a frame's lines (with the frame) or a call line
// (without), joined with recursion folded (repeated_frames.h): only the frames shown are
// formatted, so a 100,000-frame thread costs a few lines.
class TracebackLines {
 public:
  TracebackLines(SourceReader* sources, const Colors& c, const TextStyle& style)
      : sources_(sources), c_(c), style_(style) {}
  void frame(const cpython::PythonFrame& frame) {
    if (style_.fold_recursion && previous_ && repeats_previous(frame, *previous_)) {
      if (++run_ > kRepeatsShown) return;
    } else {
      flush();
      run_ = 1;
    }
    previous_ = &frame;
    text_ += format_frame(frame, sources_, c_, style_) + after_frame(frame, style_);
  }
  void call(const std::string& line) {
    flush();
    previous_ = nullptr;
    text_ += line;
  }
  std::string take() {
    flush();
    return std::move(text_);
  }

 private:
  void flush() {
    if (run_ > kRepeatsShown) text_ += repeated_frames_line(run_ - kRepeatsShown);
    run_ = 0;
  }
  SourceReader* sources_;
  const Colors& c_;
  const TextStyle& style_;
  const cpython::PythonFrame* previous_ = nullptr;
  size_t run_ = 0;
  std::string text_;
};

}  // namespace

std::string format_thread_header(const cpython::PythonThread& thread, const TextStyle& style) {
  Colors c = colors_for(style);
  std::string text = fmt::format("{}Thread 0x{:x}", c.header, thread.thread_id);
  if (thread.native_thread_id && thread.namespace_thread_id)
    text += fmt::format(" (LWP {}, {} in its namespace)", *thread.native_thread_id, *thread.namespace_thread_id);
  else if (thread.native_thread_id)
    text += fmt::format(" (LWP {})", *thread.native_thread_id);
  if (thread.name) text += fmt::format(" \"{}\"", for_terminal(*thread.name));
  if (thread.interpreter_id != 0) text += fmt::format(" interpreter {}", thread.interpreter_id);
  if (thread.holds_gil) text += " [holds the GIL]";
  return text + c.reset;
}

std::string format_traceback(const cpython::PythonThread& thread, SourceReader* sources,
                             const TextStyle& style) {
  Colors c = colors_for(style);
  std::string text;
  if (thread.frames.empty() && !thread.error) return "  (no Python frames)\n";
  std::string error_line;
  if (thread.error) {
    error_line = fmt::format("  {}<frames end here: {}>{}\n", c.warning, for_terminal(thread.error->describe()),
                             c.reset);
  }
  TracebackLines lines(sources, c, style);
  if (style.most_recent_first) {
    text += "Traceback (most recent call first):\n";
    for (const auto& frame : thread.frames) lines.frame(frame);
    text += lines.take() + error_line;
  } else {
    text += "Traceback (most recent call last):\n";
    text += error_line;  // the outermost frames are the ones that could not be read
    for (auto it = thread.frames.rbegin(); it != thread.frames.rend(); ++it) lines.frame(*it);
    text += lines.take();
  }
  return text;
}

std::string format_traceback(const cpython::PythonThread& thread, SourceReader* sources,
                             const TextStyle& style,
                             const std::vector<std::vector<std::string>>& calls) {
  if (calls.empty() || thread.frames.empty()) return format_traceback(thread, sources, style);
  Colors c = colors_for(style);
  // Innermost first: call lines (a string) and frames (an index into thread.frames).
  std::vector<std::pair<std::string, size_t>> chunks;
  constexpr size_t kCallLine = SIZE_MAX;
  auto groups = cpython::eval_loop_groups(thread);
  for (size_t k = 0; k < groups.size(); ++k) {
    if (k < calls.size())
      for (const std::string& line : calls[k]) chunks.emplace_back(fmt::format("  {}\n", line), kCallLine);
    for (size_t i = groups[k].begin; i < groups[k].end; ++i) chunks.emplace_back(std::string(), i);
  }
  TracebackLines lines(sources, c, style);
  auto add = [&](const std::pair<std::string, size_t>& chunk) {
    if (chunk.second == kCallLine) lines.call(chunk.first);
    else lines.frame(thread.frames[chunk.second]);
  };
  std::string error_line;
  if (thread.error) {
    error_line = fmt::format("  {}<frames end here: {}>{}\n", c.warning, for_terminal(thread.error->describe()),
                             c.reset);
  }
  if (style.most_recent_first) {
    for (const auto& chunk : chunks) add(chunk);
    return "Traceback (most recent call first):\n" + lines.take() + error_line;
  }
  for (auto it = chunks.rbegin(); it != chunks.rend(); ++it) add(*it);
  return "Traceback (most recent call last):\n" + error_line + lines.take();
}

std::string format_threads_without_python(const cpython::ProcessStacks& stacks,
                                          const diagnosis::ProcessDiagnosis* diagnosis) {
  if (!stacks.threads_without_python || stacks.threads_without_python->empty()) return {};
  constexpr size_t kMaxListed = 32;  // a job with hundreds of OpenMP threads stays one line
  const std::vector<int64_t>& lwps = *stacks.threads_without_python;
  std::string listed;
  for (size_t i = 0; i < lwps.size() && i < kMaxListed; ++i)
    listed += fmt::format("{}{}", i == 0 ? "" : ", ", lwps[i]);
  if (lwps.size() > kMaxListed) listed += fmt::format(" and {} more", lwps.size() - kMaxListed);
  std::string text = fmt::format("{} other thread{} run{} no Python: LWP {}\n", lwps.size(),
                                 lwps.size() == 1 ? "" : "s", lwps.size() == 1 ? "s" : "", listed);
  // Those whose native stacks the diagnosis read and named (a collective's backend workers).
  if (diagnosis != nullptr) {
    for (const auto& [lwp, role] : diagnosis->native_roles) text += fmt::format("  LWP {}: {}\n", lwp, for_terminal(role));
  }
  return text;
}

std::string format_process(const cpython::ProcessStacks& stacks, SourceReader* sources,
                           const TextStyle& style, const diagnosis::ProcessDiagnosis* diagnosis) {
  std::string text = diagnosis ? format_process_diagnosis(*diagnosis) : std::string();
  for (size_t i = 0; i < stacks.threads.size(); ++i) {
    const cpython::PythonThread& thread = stacks.threads[i];
    text += format_thread_header(thread, style) + "\n";
    if (diagnosis && i < diagnosis->threads.size())
      text += format_thread_diagnosis(diagnosis->threads[i], stacks);
    text += format_traceback(thread, sources, style);
    text += "\n";
  }
  return text + format_threads_without_python(stacks, diagnosis);
}

}  // namespace hangpy::report
