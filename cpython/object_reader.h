// Reads CPython objects out of a target: type names, str and bytes. Every size taken from the
// target is capped before use; results for type names are cached by type address.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpython/address_space.h"
#include "cpython/layout.h"

namespace hangpy::cpython {

inline constexpr size_t kMaxStringCodePoints = 4096;  // file names, function names
inline constexpr size_t kMaxBytesObject = 1 << 22;     // line tables, bytecode
inline constexpr size_t kMaxTypeName = 256;

class ObjectReader {
 public:
  ObjectReader(const AddressSpace& memory, const Layout& layout)
      : memory_(memory), layout_(layout) {}

  const AddressSpace& memory() const { return memory_; }
  const Layout& layout() const { return layout_; }

  Expected<uint64_t> type_of(uint64_t object) const;
  // tp_name of the object's type ("code", "frame", "str").
  Expected<std::string> type_name(uint64_t object) const;
  // tp_name of a type object itself (a base class, say).
  Expected<std::string> name_of_type(uint64_t type) const;
  // The same, as a view of the name kept for the type (valid while this reader lives): what the
  // many type tests of a diagnosis compare, with no copy of the name made for each.
  Expected<std::string_view> type_name_view(uint64_t object) const;
  Expected<std::string_view> name_of_type_view(uint64_t type) const;
  // Fails with kCorrupt when the object is not of the type named.
  Expected<void> expect_type(uint64_t object, std::string_view expected_name) const;

  // A str (or Python 2 str) as UTF-8; longer strings are cut at kMaxStringCodePoints, with a
  // mark saying so.
  Expected<std::string> read_string(uint64_t object) const;
  // Its first `max_code_points` only, nothing read past them and no mark: for a repr that shows
  // no more (what is read is what a snapshot keeps).
  Expected<std::string> read_string_prefix(uint64_t object, size_t max_code_points) const;
  // Whether a str is `text` (ASCII): its length is compared before its characters are read, so a
  // dict lookup by name reads little of the keys that differ.
  Expected<bool> string_equals(uint64_t object, std::string_view text) const;
  // Which of `texts` a str is (the first equal one), as string_equals would tell of each, but
  // its length read once and its characters at most once: an instance's attributes are matched
  // against several names in one pass over its __dict__.
  Expected<std::optional<size_t>> string_among(uint64_t object, std::span<const std::string_view> texts) const;
  // A Python 2 `unicode` as UTF-8 (UCS-2 or UCS-4 per string.python2_unicode_width), cut like
  // read_string; kUnsupported where the width is not known.
  Expected<std::string> read_python2_unicode(uint64_t object) const;
  // An int's sign and base-2**digit_bits digits, least significant first (at most `max_digits`;
  // kCorrupt beyond). Python 2's int type (a C long) is not digits: read_uint64 handles it.
  struct IntDigits {
    bool negative = false;
    std::vector<uint32_t> digits;
    unsigned digit_bits = 30;
  };
  Expected<IntDigits> read_int_digits(uint64_t object, size_t max_digits) const;
  // An int that fits in 64 bits (thread idents, counters).
  Expected<uint64_t> read_uint64(uint64_t object) const;

  // The contents of a bytes (Python 2: str) object, at most `cap` bytes.
  Expected<std::vector<std::byte>> read_bytes(uint64_t object, size_t cap = kMaxBytesObject) const;

 private:
  Expected<std::string> read_string_up_to(uint64_t object, size_t max_code_points, bool mark) const;
  Expected<std::string> read_pep393_string(uint64_t object, size_t max_code_points, bool mark) const;

  const AddressSpace& memory_;
  const Layout& layout_;
  mutable std::unordered_map<uint64_t, std::string> type_names_;
};

}  // namespace hangpy::cpython
