#include "cpython/object_reader.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace hangpy::cpython {
namespace {

void append_utf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  } else if (code_point < 0x110000) {
    out.push_back(static_cast<char>(0xf0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
  } else {
    out += "\xef\xbf\xbd";  // U+FFFD: the target held no valid code point
  }
}

// A str read in part is marked as such: a name cut without a mark reads as another name.
std::string with_cut_mark(std::string text, uint64_t length) {
  if (length > kMaxStringCodePoints)
    text += fmt::format("\u2026(cut at {} characters)", kMaxStringCodePoints);
  return text;
}

}  // namespace

Expected<uint64_t> ObjectReader::type_of(uint64_t object) const {
  if (object == 0) return make_error(ErrorKind::kCorrupt, "null object pointer");
  return read_pointer(memory_, object + layout_.object.ob_type);
}

Expected<std::string> ObjectReader::type_name(uint64_t object) const {
  auto name = type_name_view(object);
  if (!name) return std::unexpected(name.error());
  return std::string(*name);
}

Expected<std::string> ObjectReader::name_of_type(uint64_t type) const {
  auto name = name_of_type_view(type);
  if (!name) return std::unexpected(name.error());
  return std::string(*name);
}

Expected<std::string_view> ObjectReader::type_name_view(uint64_t object) const {
  auto type = type_of(object);
  if (!type) return std::unexpected(type.error());
  return name_of_type_view(*type);
}

Expected<std::string_view> ObjectReader::name_of_type_view(uint64_t type) const {
  // The map's nodes do not move: a view of a kept name stays valid as more are kept.
  if (auto cached = type_names_.find(type); cached != type_names_.end()) return std::string_view(cached->second);
  auto name_pointer = read_pointer(memory_, type + layout_.object.tp_name);
  if (!name_pointer) return std::unexpected(name_pointer.error());
  auto name = read_c_string(memory_, *name_pointer, kMaxTypeName);
  if (!name) return std::unexpected(name.error());
  return std::string_view(type_names_.emplace(type, std::move(*name)).first->second);
}

Expected<void> ObjectReader::expect_type(uint64_t object, std::string_view expected_name) const {
  auto name = type_name_view(object);
  if (!name) return std::unexpected(name.error());
  if (*name != expected_name) {
    return make_error(ErrorKind::kCorrupt,
                      fmt::format("expected a '{}' object, found '{}'", expected_name, *name),
                      object);
  }
  return {};
}

Expected<ObjectReader::IntDigits> ObjectReader::read_int_digits(uint64_t object,
                                                               size_t max_digits) const {
  const VariablesLayout& v = layout_.variables;
  auto size_field = read_value<int64_t>(memory_, object + v.int_size);
  if (!size_field) return std::unexpected(size_field.error());
  IntDigits result;
  result.digit_bits = v.int_digit_bits;
  uint64_t count;
  if (v.int_model == IntModel::kLvTag) {
    count = static_cast<uint64_t>(*size_field) >> 3;
    result.negative = (*size_field & 3) == 2;
  } else {
    result.negative = *size_field < 0;
    count = static_cast<uint64_t>(result.negative ? -*size_field : *size_field);
  }
  if (count > max_digits)
    return make_error(ErrorKind::kCorrupt, fmt::format("int of {} digits", count), object);
  result.digits.resize(count);
  if (count > 0) {
    auto bytes = std::as_writable_bytes(std::span(result.digits));
    if (auto ok = memory_.read(object + v.int_digits, bytes); !ok) return std::unexpected(ok.error());
  }
  return result;
}

Expected<uint64_t> ObjectReader::read_uint64(uint64_t object) const {
  if (layout_.variables.machine_int_value != kAbsent) {
    auto type = type_name(object);
    if (type && *type == "int")
      return read_value<uint64_t>(memory_, object + layout_.variables.machine_int_value);
  }
  auto number = read_int_digits(object, 64 / layout_.variables.int_digit_bits + 1);
  if (!number) return std::unexpected(number.error());
  uint64_t value = 0;
  for (size_t i = number->digits.size(); i-- > 0;)
    value = (value << number->digit_bits) | number->digits[i];
  return value;
}

Expected<std::vector<std::byte>> ObjectReader::read_bytes(uint64_t object, size_t cap) const {
  if (object == 0) return make_error(ErrorKind::kCorrupt, "null bytes pointer");
  auto size = read_value<int64_t>(memory_, object + layout_.bytes.size);
  if (!size) return std::unexpected(size.error());
  if (*size < 0) return make_error(ErrorKind::kCorrupt, "negative bytes size", object);
  size_t length = std::min<uint64_t>(static_cast<uint64_t>(*size), cap);
  return cpython::read_bytes(memory_, object + layout_.bytes.data, length);
}

Expected<std::string> ObjectReader::read_string(uint64_t object) const {
  return read_string_up_to(object, kMaxStringCodePoints, true);
}

Expected<std::string> ObjectReader::read_string_prefix(uint64_t object, size_t max_code_points) const {
  return read_string_up_to(object, std::min(max_code_points, kMaxStringCodePoints), false);
}

Expected<std::string> ObjectReader::read_string_up_to(uint64_t object, size_t max_code_points,
                                                      bool mark) const {
  if (object == 0) return make_error(ErrorKind::kCorrupt, "null str pointer");
  if (layout_.string.model == StringModel::kBytes) {
    auto bytes = read_value<int64_t>(memory_, object + layout_.string.length);
    if (!bytes) return std::unexpected(bytes.error());
    if (*bytes < 0) return make_error(ErrorKind::kCorrupt, "negative str size", object);
    size_t length = std::min<uint64_t>(static_cast<uint64_t>(*bytes), max_code_points);
    auto data = cpython::read_bytes(memory_, object + layout_.string.bytes_data, length);
    if (!data) return std::unexpected(data.error());
    std::string text(reinterpret_cast<const char*>(data->data()), data->size());
    return mark ? with_cut_mark(std::move(text), static_cast<uint64_t>(*bytes)) : text;
  }
  return read_pep393_string(object, max_code_points, mark);
}

Expected<bool> ObjectReader::string_equals(uint64_t object, std::string_view text) const {
  auto which = string_among(object, std::span<const std::string_view>(&text, 1));
  if (!which) return std::unexpected(which.error());
  return which->has_value();
}

Expected<std::optional<size_t>> ObjectReader::string_among(uint64_t object,
                                                          std::span<const std::string_view> texts) const {
  if (object == 0) return make_error(ErrorKind::kCorrupt, "null str pointer");
  // A str's length (code points, or Python 2's bytes) is an ASCII text's own: compared first, it
  // spares reading the characters of keys that differ.
  auto length_tells = [](std::string_view text) {
    return text.size() < kMaxStringCodePoints &&
           std::all_of(text.begin(), text.end(), [](char c) { return (c & 0x80) == 0; });
  };
  std::optional<int64_t> length;
  if (std::any_of(texts.begin(), texts.end(), length_tells)) {
    auto read = read_value<int64_t>(memory_, object + layout_.string.length);
    if (!read) return std::unexpected(read.error());
    length = *read;
  }
  std::optional<std::string> characters;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (length_tells(texts[i]) && *length != static_cast<int64_t>(texts[i].size())) continue;
    if (!characters) {
      auto read = read_string(object);
      if (!read) return std::unexpected(read.error());
      characters = std::move(*read);
    }
    if (*characters == texts[i]) return i;
  }
  return std::nullopt;
}

Expected<std::string> ObjectReader::read_pep393_string(uint64_t object, size_t max_code_points,
                                                      bool mark) const {
  const StringLayout& s = layout_.string;
  auto length = read_value<int64_t>(memory_, object + s.length);
  auto state = read_value<uint32_t>(memory_, object + s.state);
  if (!length) return std::unexpected(length.error());
  if (!state) return std::unexpected(state.error());
  if (*length < 0) return make_error(ErrorKind::kCorrupt, "negative str length", object);
  unsigned kind = (*state >> s.kind_shift) & 0x7;
  bool compact = (*state >> s.compact_shift) & 1;
  bool ascii = (*state >> s.ascii_shift) & 1;
  if (kind != 1 && kind != 2 && kind != 4)
    return make_error(ErrorKind::kCorrupt, fmt::format("str of unknown kind {}", kind), object);

  uint64_t data_address;
  if (compact) {
    data_address = object + (ascii ? s.ascii_data : s.compact_data);
  } else {
    // A legacy (non-compact) string keeps a pointer to its data right after the compact header.
    auto pointer = read_pointer(memory_, object + s.compact_data);
    if (!pointer) return std::unexpected(pointer.error());
    data_address = *pointer;
  }
  size_t count = std::min<uint64_t>(static_cast<uint64_t>(*length), max_code_points);
  auto raw = cpython::read_bytes(memory_, data_address, count * kind);
  if (!raw) return std::unexpected(raw.error());

  std::string text;
  // The common case, an ASCII string: its bytes are the UTF-8 (unless the target lies about it).
  if (kind == 1 && ascii &&
      std::all_of(raw->begin(), raw->end(), [](std::byte b) { return (b & std::byte{0x80}) == std::byte{0}; })) {
    text.assign(reinterpret_cast<const char*>(raw->data()), raw->size());
    return mark ? with_cut_mark(std::move(text), static_cast<uint64_t>(*length)) : text;
  }
  text.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    uint32_t code_point = 0;
    for (unsigned b = 0; b < kind; ++b)
      code_point |= static_cast<uint32_t>((*raw)[i * kind + b]) << (8 * b);
    append_utf8(text, code_point);
  }
  return mark ? with_cut_mark(std::move(text), static_cast<uint64_t>(*length)) : text;
}

Expected<std::string> ObjectReader::read_python2_unicode(uint64_t object) const {
  const StringLayout& s = layout_.string;
  if (s.python2_unicode_width != 2 && s.python2_unicode_width != 4)
    return make_error(ErrorKind::kUnsupported, "the width of this build's Py_UNICODE is unknown");
  auto length = read_value<int64_t>(memory_, object + static_cast<uint64_t>(s.python2_unicode_length));
  auto buffer = read_pointer(memory_, object + static_cast<uint64_t>(s.python2_unicode_buffer));
  if (!length) return std::unexpected(length.error());
  if (!buffer) return std::unexpected(buffer.error());
  if (*length < 0) return make_error(ErrorKind::kCorrupt, "negative unicode length", object);
  size_t count = std::min<uint64_t>(static_cast<uint64_t>(*length), kMaxStringCodePoints);
  unsigned width = static_cast<unsigned>(s.python2_unicode_width);
  auto raw = cpython::read_bytes(memory_, *buffer, count * width);
  if (!raw) return std::unexpected(raw.error());
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    uint32_t unit = 0;
    for (unsigned b = 0; b < width; ++b)
      unit |= static_cast<uint32_t>((*raw)[i * width + b]) << (8 * b);
    // A UCS-2 build keeps characters beyond the BMP as surrogate pairs.
    if (width == 2 && unit >= 0xd800 && unit < 0xdc00 && i + 1 < count) {
      uint32_t low = static_cast<uint32_t>((*raw)[(i + 1) * 2]) |
                     static_cast<uint32_t>((*raw)[(i + 1) * 2 + 1]) << 8;
      if (low >= 0xdc00 && low < 0xe000) {
        unit = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
        ++i;
      }
    }
    append_utf8(text, unit);
  }
  return with_cut_mark(std::move(text), static_cast<uint64_t>(*length));
}

}  // namespace hangpy::cpython
