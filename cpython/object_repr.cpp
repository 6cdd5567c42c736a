#include "cpython/object_repr.h"

#include <cmath>

namespace hangpy::cpython {
namespace {

constexpr int kMaxDepth = 3;
constexpr size_t kMaxItemsShown = 12;

std::string unreadable(uint64_t object) { return fmt::format("<unreadable at 0x{:x}>", object); }

}  // namespace

std::string quote_string(const std::string& text, bool bytes_prefix) {
  bool has_single = text.find('\'') != std::string::npos;
  bool has_double = text.find('"') != std::string::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string out = bytes_prefix ? "b" : "";
  out.push_back(quote);
  for (unsigned char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == static_cast<unsigned char>(quote)) {
          out.push_back('\\');
          out.push_back(static_cast<char>(c));
        } else if (c < 0x20 || c == 0x7f || (bytes_prefix && c >= 0x80)) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back(quote);
  return out;
}

std::string ObjectRepr::repr(uint64_t object, size_t max_length) const {
  std::string text = repr_at_depth(object, 0);
  if (text.size() > max_length) text = text.substr(0, max_length) + "...";
  return text;
}

std::string ObjectRepr::repr_at_depth(uint64_t object, int depth) const {
  if (object == 0) return "<NULL>";
  auto type = objects_.type_name(object);
  if (!type) return unreadable(object);
  const std::string& name = *type;
  if (name == "NoneType") return "None";
  if (name == "bool") return repr_int(object) == "0" ? "False" : "True";
  if (name == "int" || name == "long") return repr_int(object);
  if (name == "float") return repr_float(object);
  if (name == "str" || name == "unicode") {
    auto text = objects_.read_string(object);
    if (!text) return unreadable(object);
    // Python 2's str is bytes; its repr has no prefix, 3's unicode is text.
    return quote_string(*text);
  }
  if (name == "bytes") {
    auto bytes = objects_.read_bytes(object, 1024);
    if (!bytes) return unreadable(object);
    return quote_string(std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size()),
                        true);
  }
  if (depth >= kMaxDepth) return fmt::format("<{} object at 0x{:x}>", name, object);
  if (name == "tuple") return repr_sequence(object, true, depth);
  if (name == "list") return repr_sequence(object, false, depth);
  if (name == "dict") return repr_dict(object, depth);
  return fmt::format("<{} object at 0x{:x}>", name, object);
}

std::string ObjectRepr::repr_int(uint64_t object) const {
  if (objects_.layout().variables.machine_int_value != kAbsent) {
    // Python 2's int is a C long; its long is digits like 3's.
    auto type = objects_.type_name(object);
    if (type && *type != "long") {
      auto value = objects_.read_uint64(object);
      return value ? std::to_string(static_cast<int64_t>(*value)) : unreadable(object);
    }
  }
  // Four 30-bit digits fit in 128 bits; longer numbers are rare in a stack and shown by size.
  constexpr size_t kMaxDigits = 4;
  auto number = objects_.read_int_digits(object, kMaxDigits);
  if (!number) {
    if (number.error().kind == ErrorKind::kCorrupt) return "<int too long to show>";
    return unreadable(object);
  }
  if (number->digits.empty()) return "0";
  __extension__ typedef unsigned __int128 Wide;
  Wide magnitude = 0;
  for (size_t i = number->digits.size(); i-- > 0;)
    magnitude = (magnitude << number->digit_bits) | number->digits[i];
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  return number->negative ? "-" + digits : digits;
}

std::string ObjectRepr::repr_float(uint64_t object) const {
  auto value = read_value<double>(objects_.memory(),
                                  object + objects_.layout().variables.float_value);
  if (!value) return unreadable(object);
  if (std::isnan(*value)) return "nan";
  if (std::isinf(*value)) return *value > 0 ? "inf" : "-inf";
  std::string text = fmt::format("{}", *value);  // shortest round-trip form, like Python's
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string ObjectRepr::repr_sequence(uint64_t object, bool is_tuple, int depth) const {
  auto items = is_tuple ? containers_.tuple_items(object, kMaxItemsShown + 1)
                        : containers_.list_items(object, kMaxItemsShown + 1);
  if (!items) return unreadable(object);
  std::string text = is_tuple ? "(" : "[";
  for (size_t i = 0; i < items->size() && i < kMaxItemsShown; ++i) {
    if (i > 0) text += ", ";
    text += repr_at_depth((*items)[i], depth + 1);
  }
  if (items->size() > kMaxItemsShown) text += ", ...";
  if (is_tuple && items->size() == 1) text += ",";
  return text + (is_tuple ? ")" : "]");
}

std::string ObjectRepr::repr_dict(uint64_t object, int depth) const {
  auto items = containers_.dict_items(object, kMaxItemsShown + 1);
  if (!items) return unreadable(object);
  std::string text = "{";
  for (size_t i = 0; i < items->size() && i < kMaxItemsShown; ++i) {
    if (i > 0) text += ", ";
    text += repr_at_depth((*items)[i].first, depth + 1) + ": " +
            repr_at_depth((*items)[i].second, depth + 1);
  }
  if (items->size() > kMaxItemsShown) text += ", ...";
  return text + "}";
}

}  // namespace hangpy::cpython
