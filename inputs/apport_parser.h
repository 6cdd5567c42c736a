// The apport .crash format (problem_report.py): RFC822-like "Name: value" lines; a value of
// several lines continues on lines that start with a space; a binary value is written as
// "Name: base64" followed by space-indented lines, each its own base64 text (padded), of gzip
// data (zlib in old reports). The parser is fed the file in pieces of any size and never holds
// a binary value: the one it is asked for goes, decoded from base64, to a sink; others are
// skipped. Text values are kept, each up to kMaxApportTextField bytes.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "inputs/stream_decoder.h"

namespace hangpy::inputs {

inline constexpr size_t kMaxApportTextField = 4 << 20;

class ApportParser {
 public:
  // `binary_field`'s decoded bytes (still gzip/zlib-compressed) go to `sink`.
  ApportParser(std::string binary_field, ByteSink sink);

  // Errors: kInvalidInput (a line that is no field, base64 garbage), or the sink's.
  Expected<void> feed(std::string_view text);
  // Ends the input (a last line without a newline counts).
  Expected<void> finish();

  // Text fields by name (a multi-line value joined with '\n', without the leading spaces).
  const std::map<std::string, std::string>& fields() const { return fields_; }
  // The names of the binary ("base64") fields seen.
  const std::set<std::string>& binary_fields() const { return binary_fields_; }
  // Bytes of `binary_field` decoded so far.
  uint64_t binary_bytes() const { return binary_bytes_; }

 private:
  enum class State { kLineStart, kName, kValueStart, kValue, kText, kBase64, kSkip };
  Expected<void> take(char c);
  Expected<void> end_line();
  Expected<void> base64_char(char c);
  Expected<void> flush_binary();
  void commit_field();
  Error invalid(std::string what) const;

  std::string binary_field_;
  ByteSink sink_;
  State state_ = State::kLineStart;
  std::string name_;
  std::string value_;
  bool in_field_ = false;
  bool field_is_binary_ = false;
  uint64_t line_ = 1;
  std::map<std::string, std::string> fields_;
  std::set<std::string> binary_fields_;
  // base64: the bits of the quartet so far, how many characters, how many '=' seen.
  uint32_t quartet_ = 0;
  int quartet_chars_ = 0;
  int padding_ = 0;
  bool line_padded_ = false;  // the line's last quartet had '=': nothing may follow on it
  std::vector<std::byte> decoded_;
  uint64_t binary_bytes_ = 0;
};

}  // namespace hangpy::inputs
