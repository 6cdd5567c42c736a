// Source lines for the text report, read from the analysing machine's files (under --sysroot when
// given). Files are read once and cached; an unreadable file just means no source line.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace hangpy::report {

class SourceReader {
 public:
  virtual ~SourceReader() = default;
  // The line without its leading and trailing blanks, as tracebacks print it.
  virtual std::optional<std::string> line(const std::string& file, int line_number) = 0;
  // The line as the file has it (only the line end removed): columns count from its start.
  virtual std::optional<std::string> raw_line(const std::string& file, int line_number) = 0;
};

class FileSourceReader : public SourceReader {
 public:
  explicit FileSourceReader(std::string sysroot = {}) : sysroot_(std::move(sysroot)) {}
  std::optional<std::string> line(const std::string& file, int line_number) override;
  std::optional<std::string> raw_line(const std::string& file, int line_number) override;

 private:
  const std::vector<std::string>* lines_of(const std::string& file);
  std::string sysroot_;
  std::unordered_map<std::string, std::optional<std::vector<std::string>>> files_;
};

}  // namespace hangpy::report
