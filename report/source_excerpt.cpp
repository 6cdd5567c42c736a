#include "report/source_excerpt.h"

#include <algorithm>

#include <fmt/format.h>

namespace hangpy::report {
namespace {

// Characters (UTF-8 sequences) in the first `bytes` bytes of `text`: location tables count
// columns in bytes, a terminal shows characters.
size_t characters_in(const std::string& text, size_t bytes) {
  size_t count = 0;
  for (size_t i = 0; i < bytes && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) ++count;
  return count;
}

size_t leading_blanks(const std::string& text) {
  size_t blanks = text.find_first_not_of(" \t");
  return blanks == std::string::npos ? text.size() : blanks;
}

size_t length_without_trailing_blanks(const std::string& text) {
  size_t last = text.find_last_not_of(" \t\r");
  return last == std::string::npos ? 0 : last + 1;
}

// [start, end) of the frame's expression on its first line, in bytes of `raw_line`.
std::optional<std::pair<size_t, size_t>> expression_bytes(const cpython::PythonFrame& frame,
                                                          const std::string& raw_line) {
  if (!frame.line || !frame.column || *frame.column < 0) return std::nullopt;
  const size_t line_end = length_without_trailing_blanks(raw_line);
  const auto start = static_cast<size_t>(*frame.column);
  size_t end = line_end;  // an expression that goes on to later lines: to the end of this one
  if (frame.end_line == frame.line) {
    if (!frame.end_column || *frame.end_column < 0) return std::nullopt;
    end = std::min(static_cast<size_t>(*frame.end_column), line_end);
  } else if (!frame.end_line || *frame.end_line < *frame.line) {
    return std::nullopt;
  }
  if (start >= end) return std::nullopt;
  return std::pair(start, end);
}

std::string marked_line(const std::string& prefix, const std::string& text) {
  std::string line = prefix + text;
  return line.substr(0, length_without_trailing_blanks(line)) + "\n";
}

}  // namespace

std::optional<std::string> caret_marks(const cpython::PythonFrame& frame,
                                       const std::string& raw_line) {
  auto bytes = expression_bytes(frame, raw_line);
  if (!bytes) return std::nullopt;
  const size_t indent = leading_blanks(raw_line);
  const size_t line_end = length_without_trailing_blanks(raw_line);
  if (bytes->first <= indent && bytes->second >= line_end) return std::nullopt;  // whole line
  const size_t start = characters_in(raw_line, bytes->first);
  const size_t end = characters_in(raw_line, bytes->second);
  return std::string(start, ' ') + std::string(end - start, '^');
}

std::string format_frame_source(const cpython::PythonFrame& frame, SourceReader* sources,
                                int context_lines, bool carets) {
  if (!sources || !frame.line) return {};
  const int current = *frame.line;
  auto raw = sources->raw_line(frame.file, current);
  if (!raw) return {};
  const auto marks = carets ? caret_marks(frame, *raw) : std::nullopt;
  if (context_lines <= 0) {
    const size_t indent = leading_blanks(*raw);
    const size_t line_end = length_without_trailing_blanks(*raw);
    if (line_end <= indent) return {};
    std::string text = fmt::format("    {}\n", raw->substr(indent, line_end - indent));
    // The source line is printed without its indentation; so are the carets.
    const size_t indent_characters = characters_in(*raw, indent);
    if (marks && marks->size() > indent_characters)
      text += fmt::format("    {}\n", marks->substr(indent_characters));
    return text;
  }
  const int first = std::max(1, current - context_lines);
  const int last = current + context_lines;
  const size_t width = std::to_string(last).size();
  std::string text;
  for (int number = first; number <= last; ++number) {
    auto line = number == current ? raw : sources->raw_line(frame.file, number);
    if (!line) break;  // past the end of the file
    const std::string prefix =
        fmt::format("    {} {:>{}}  ", number == current ? '>' : ' ', number, width);
    text += marked_line(prefix, *line);
    if (number == current && marks) text += fmt::format("{}{}\n", std::string(prefix.size(), ' '), *marks);
  }
  return text;
}

nlohmann::json context_json(const cpython::PythonFrame& frame, SourceReader& sources,
                            int context_lines) {
  if (!frame.line || !sources.raw_line(frame.file, *frame.line)) return nullptr;
  nlohmann::json lines = nlohmann::json::array();
  const int current = *frame.line;
  for (int number = std::max(1, current - context_lines); number <= current + context_lines;
       ++number) {
    auto line = sources.raw_line(frame.file, number);
    if (!line) break;
    lines.push_back({{"line", number}, {"text", *line}, {"current", number == current}});
  }
  return lines;
}

void add_source_context(nlohmann::json& document, const cpython::ProcessStacks& stacks,
                        SourceReader& sources, int context_lines) {
  auto& threads = document["threads"];
  for (size_t t = 0; t < stacks.threads.size() && t < threads.size(); ++t) {
    const auto& frames = stacks.threads[t].frames;
    auto& out = threads[t]["frames"];
    // The document lists frames outermost first; the engine innermost first.
    for (size_t f = 0; f < frames.size() && f < out.size(); ++f)
      if (out[f].is_object()) out[f]["context"] = context_json(frames[frames.size() - 1 - f], sources, context_lines);
  }
}

}  // namespace hangpy::report
