// Read access to a parsed coreanalyze --json document for the triage, over RapidJSON's in-situ
// DOM. Why RapidJSON and not nlohmann (used everywhere else): triage reads 10,000 rank documents
// (300 MB) at once, and nlohmann's DOM spent 75% of that in its character-at-a-time lexer and
// a malloc per value and string; RapidJSON parses the text in place (strings stay in the buffer,
// values come from one pool) at 4-5x the speed (docs/json-schema.md; scripts/bench's triage rows).
//
// A document comes from another machine or a hostile core: any member may be missing or of
// another type, so every accessor answers "absent" (an empty view, nullopt, "") rather than
// failing, and every string taken out is cut to kMaxTriageString.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "triage/string_limit.h"

namespace hangpy::triage {

class JsonView {
 public:
  JsonView() = default;
  // `cut` counts the strings text() and string() had to cut; it outlives the view.
  JsonView(const rapidjson::Value* value, size_t* cut) : value_(value), cut_(cut) {}

  bool present() const { return value_ != nullptr && !value_->IsNull(); }
  bool is_object() const { return value_ != nullptr && value_->IsObject(); }
  bool is_array() const { return value_ != nullptr && value_->IsArray(); }
  bool is_string() const { return value_ != nullptr && value_->IsString(); }

  // The member `name` of an object; an empty view when this is not an object or has none.
  JsonView operator[](const char* name) const;

  // This value as a string, cut to kMaxTriageString; nullopt when it is not one.
  std::optional<std::string> string() const;
  // The member `name` as a string; "" when absent or not a string.
  std::string text(const char* name) const { return (*this)[name].string().value_or(std::string()); }
  // This string's bytes as they are in the document, uncut (for comparisons only); "" otherwise.
  std::string_view raw() const;

  std::optional<int64_t> integer() const;            // a JSON integer that fits int64_t
  std::optional<uint64_t> unsigned_integer() const;  // a non-negative JSON integer
  std::optional<double> number() const;              // any JSON number
  bool is_true() const { return value_ != nullptr && value_->IsTrue(); }

  // An array's elements (none when this is not an array).
  size_t size() const { return is_array() ? value_->Size() : 0; }
  JsonView at(size_t index) const { return JsonView(&(*value_)[static_cast<rapidjson::SizeType>(index)], cut_); }

  class Iterator {
   public:
    Iterator(const rapidjson::Value* at, size_t* cut) : at_(at), cut_(cut) {}
    JsonView operator*() const { return JsonView(at_, cut_); }
    Iterator& operator++() {
      ++at_;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return at_ != other.at_; }

   private:
    const rapidjson::Value* at_;
    size_t* cut_;
  };
  Iterator begin() const { return Iterator(is_array() ? value_->Begin() : nullptr, cut_); }
  Iterator end() const { return Iterator(is_array() ? value_->End() : nullptr, cut_); }

 private:
  const rapidjson::Value* value_ = nullptr;
  size_t* cut_ = nullptr;
};

// `text` parsed in place (its bytes are rewritten: the strings are unescaped where they lie):
// false when it is not one JSON object or array, or nests deeper than any document of ours (256
// levels: checked before the parser, whose recursion would follow a hostile depth down the
// stack). Its bytes are not checked as UTF-8: the strings kept are escaped where shown.
bool parse_in_place(std::string& text, rapidjson::Document& document);

}  // namespace hangpy::triage
