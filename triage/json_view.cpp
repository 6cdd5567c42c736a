#include "triage/json_view.h"

#include <array>
#include <limits>
#include <string_view>

namespace hangpy::triage {

JsonView JsonView::operator[](const char* name) const {
  if (!is_object()) return JsonView(nullptr, cut_);
  auto found = value_->FindMember(name);
  return found == value_->MemberEnd() ? JsonView(nullptr, cut_) : JsonView(&found->value, cut_);
}

std::string_view JsonView::raw() const {
  if (!is_string()) return {};
  return std::string_view(value_->GetString(), value_->GetStringLength());
}

std::optional<std::string> JsonView::string() const {
  if (!is_string()) return std::nullopt;
  std::string_view text = raw();
  if (text.size() <= kMaxTriageString) return std::string(text);
  size_t keep = kMaxTriageString;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xc0) == 0x80) --keep;  // whole characters
  if (cut_ != nullptr) ++*cut_;
  std::string kept(text.substr(0, keep));
  kept += "...";
  return kept;
}

std::optional<int64_t> JsonView::integer() const {
  if (value_ == nullptr || !value_->IsInt64()) return std::nullopt;
  return value_->GetInt64();
}

std::optional<uint64_t> JsonView::unsigned_integer() const {
  if (value_ == nullptr || !value_->IsUint64()) return std::nullopt;
  return value_->GetUint64();
}

std::optional<double> JsonView::number() const {
  if (value_ == nullptr || !value_->IsNumber()) return std::nullopt;
  return value_->GetDouble();
}

namespace {

// Deeper than this, a text is no document of ours (coreanalyze --json nests 8 levels): refused
// before the parser, whose recursion would otherwise follow a hostile depth down the stack.
constexpr size_t kMaxDepth = 256;

// What each byte is to shallow_enough(): most are nothing, and are passed over by one lookup.
enum ByteKind : unsigned char { kOther, kQuote, kOpen, kClose };
constexpr std::array<unsigned char, 256> kByteKinds = [] {
  std::array<unsigned char, 256> kinds{};
  kinds['"'] = kQuote;
  kinds['{'] = kinds['['] = kOpen;
  kinds['}'] = kinds[']'] = kClose;
  return kinds;
}();

// Whether `text` nests objects and arrays no deeper than kMaxDepth (brackets inside strings do
// not count). One pass over bytes the parser reads anyway: a sixth of the parse's time.
bool shallow_enough(std::string_view text) {
  size_t depth = 0;
  const auto* at = reinterpret_cast<const unsigned char*>(text.data());
  const auto* const end = at + text.size();
  while (at < end) {
    switch (kByteKinds[*at++]) {
      case kQuote:  // to the string's closing quote, escapes skipped
        while (at < end) {
          const unsigned char c = *at++;
          if (c == '\\') ++at;
          else if (c == '"') break;
        }
        break;
      case kOpen:
        if (++depth > kMaxDepth) return false;
        break;
      case kClose:
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return true;
}

}  // namespace

bool parse_in_place(std::string& text, rapidjson::Document& document) {
  // RapidJSON counts in 32 bits: a larger text is no document of ours.
  if (text.size() >= std::numeric_limits<rapidjson::SizeType>::max()) return false;
  // Only an object or an array is a document (of one process or several).
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || (text[first] != '{' && text[first] != '[') || !shallow_enough(text)) {
    document.SetNull();
    return false;
  }
  // Not validated as UTF-8 (a sixth of the parse): the few strings a triage keeps are escaped
  // where they are shown (for_terminal, the HTML and JSON writers), as text from a core is. Not
  // RapidJSON 1.1's iterative parser either: its stack does arithmetic on a null pointer on some
  // errors (undefined behaviour, found by the fuzzer under UBSan); the depth is bounded above.
  document.ParseInsitu<rapidjson::kParseDefaultFlags>(text.data());
  return !document.HasParseError();
}

}  // namespace hangpy::triage
