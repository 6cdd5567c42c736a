#include "inputs/apport_parser.h"

#include <cctype>

namespace hangpy::inputs {
namespace {

constexpr size_t kMaxNameBytes = 128;
constexpr size_t kDecodedChunk = 1 << 16;

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

}  // namespace

ApportParser::ApportParser(std::string binary_field, ByteSink sink)
    : binary_field_(std::move(binary_field)), sink_(std::move(sink)) {}

Error ApportParser::invalid(std::string what) const {
  return Error{ErrorKind::kInvalidInput, fmt::format("line {}: {}", line_, what), std::nullopt};
}

Expected<void> ApportParser::feed(std::string_view text) {
  for (char c : text) {
    if (auto ok = take(c); !ok) return ok;
  }
  return {};
}

void ApportParser::commit_field() {
  if (in_field_ && !field_is_binary_) fields_[name_] = std::move(value_);
  in_field_ = false;
  field_is_binary_ = false;
  value_.clear();
}

Expected<void> ApportParser::flush_binary() {
  if (decoded_.empty()) return {};
  binary_bytes_ += decoded_.size();
  auto ok = sink_(decoded_);
  decoded_.clear();
  return ok;
}

Expected<void> ApportParser::base64_char(char c) {
  if (line_padded_) {
    return std::unexpected(invalid(fmt::format("{}: not base64 (data after '=' padding)", name_)));
  }
  if (c == '=') {
    if (quartet_chars_ < 2) return std::unexpected(invalid(fmt::format("{}: misplaced '=' in base64", name_)));
    ++padding_;
    ++quartet_chars_;
    quartet_ <<= 6;
  } else {
    const int value = base64_value(c);
    if (value < 0 || padding_ > 0) {
      return std::unexpected(invalid(fmt::format("{}: not base64 (byte 0x{:02x})", name_,
                                                 static_cast<unsigned char>(c))));
    }
    quartet_ = (quartet_ << 6) | static_cast<uint32_t>(value);
    ++quartet_chars_;
  }
  if (quartet_chars_ == 4) {
    const std::byte bytes[3] = {std::byte(quartet_ >> 16), std::byte(quartet_ >> 8), std::byte(quartet_)};
    decoded_.insert(decoded_.end(), bytes, bytes + 3 - padding_);
    line_padded_ = padding_ > 0;
    quartet_ = 0;
    quartet_chars_ = 0;
    padding_ = 0;
    if (decoded_.size() >= kDecodedChunk) return flush_binary();
  }
  return {};
}

Expected<void> ApportParser::end_line() {
  switch (state_) {
    case State::kName:
      return std::unexpected(invalid(fmt::format("'{}' is not a 'Name: value' field", name_)));
    case State::kValueStart:
    case State::kValue:
      if (value_ == "base64") {
        field_is_binary_ = true;
        binary_fields_.insert(name_);
      }
      break;
    case State::kBase64:
      // apport encodes each line on its own: a line ends with a whole quartet.
      if (quartet_chars_ != 0) {
        return std::unexpected(invalid(fmt::format("{}: base64 line of a length that is no multiple of 4", name_)));
      }
      break;
    default:
      break;
  }
  state_ = State::kLineStart;
  line_padded_ = false;
  ++line_;
  return {};
}

Expected<void> ApportParser::take(char c) {
  if (c == '\n') return end_line();
  switch (state_) {
    case State::kLineStart:
      if (c == ' ' || c == '\t') {
        if (!in_field_) return std::unexpected(invalid("a continuation line before any field"));
        if (!field_is_binary_) {
          if (value_.size() < kMaxApportTextField && !value_.empty()) value_ += '\n';
          state_ = State::kText;
        } else {
          state_ = name_ == binary_field_ ? State::kBase64 : State::kSkip;
        }
        return {};
      }
      if (c == '\r') return {};
      commit_field();
      if (!name_char(c)) {
        return std::unexpected(invalid(fmt::format("not an apport field (byte 0x{:02x})",
                                                   static_cast<unsigned char>(c))));
      }
      name_.assign(1, c);
      state_ = State::kName;
      return {};
    case State::kName:
      if (c == ':') {
        in_field_ = true;
        state_ = State::kValueStart;
      } else if (!name_char(c) || name_.size() >= kMaxNameBytes) {
        return std::unexpected(invalid("not a 'Name: value' field"));
      } else {
        name_ += c;
      }
      return {};
    case State::kValueStart:
      state_ = State::kValue;
      if (c == ' ') return {};
      [[fallthrough]];
    case State::kValue:
    case State::kText:
      if (c == '\r') return {};  // a report that went through a CRLF editor or mailer
      if (value_.size() < kMaxApportTextField) value_ += c;
      return {};
    case State::kBase64:
      if (c == '\r') return {};
      return base64_char(c);
    case State::kSkip:
      return {};
  }
  return {};
}

Expected<void> ApportParser::finish() {
  if (state_ != State::kLineStart) {
    if (auto ok = end_line(); !ok) return ok;
  }
  commit_field();
  return flush_binary();
}

}  // namespace hangpy::inputs
