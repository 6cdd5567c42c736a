#include "triage/json_view.h"

#include <limits>

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

bool parse_in_place(std::string& text, rapidjson::Document& document) {
  // RapidJSON counts in 32 bits: a larger text is no document of ours.
  if (text.size() >= std::numeric_limits<rapidjson::SizeType>::max()) return false;
  // Not validated as UTF-8 (a sixth of the parse): the few strings a triage keeps are escaped
  // where they are shown (for_terminal, the HTML and JSON writers), as text from a core is.
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag;
  document.ParseInsitu<kFlags>(text.data());
  return !document.HasParseError();
}

}  // namespace hangpy::triage
