#include "cpython/object_repr.h"

#include <cmath>

#include "cpython/instance_attributes.h"

namespace hangpy::cpython {
namespace {

// Type flags that say which built-in a type is or derives from (Include/object.h; the same bits
// in 2.7, where 1 << 23 is int and 1 << 27 str).
constexpr uint64_t kHeapTypeFlag = 1ull << 9;
constexpr uint64_t kPython2IntSubclass = 1ull << 23;
constexpr uint64_t kLongSubclass = 1ull << 24;
constexpr uint64_t kListSubclass = 1ull << 25;
constexpr uint64_t kTupleSubclass = 1ull << 26;
constexpr uint64_t kBytesSubclass = 1ull << 27;
constexpr uint64_t kUnicodeSubclass = 1ull << 28;
constexpr uint64_t kDictSubclass = 1ull << 29;
constexpr uint64_t kBaseExceptionSubclass = 1ull << 30;

constexpr size_t kMaxNameLength = 256;  // ml_name, wrapperbase.name

std::string unreadable(uint64_t object) { return fmt::format("<unreadable at 0x{:x}>", object); }
std::string remote(std::string_view type_name, uint64_t object) {
  return fmt::format("<{} at remote 0x{:x}>", type_name, object);
}

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
  std::set<uint64_t> visited;
  return repr(object, max_length, visited);
}

std::string ObjectRepr::repr(uint64_t object, size_t max_length, std::set<uint64_t>& visited) const {
  Output out{"", max_length, std::move(visited)};
  write(out, object, 0);
  visited = std::move(out.visited);
  if (out.text.size() > max_length) out.text = out.text.substr(0, max_length) + "...(truncated)";
  return out.text;
}

void ObjectRepr::write(Output& out, uint64_t object, int depth) const {
  if (out.full()) return;
  if (object == 0) {
    out.text += "0x0";  // libpython's NULL
    return;
  }
  auto type = objects_.type_of(object);
  auto type_name = objects_.type_name(object);
  if (!type || !type_name) {
    out.text += unreadable(object);
    return;
  }
  const std::string& name = *type_name;
  const Layout& layout = objects_.layout();
  uint64_t flags =
      read_value<uint64_t>(objects_.memory(), *type + static_cast<uint64_t>(layout.instances.type_flags))
          .value_or(0);
  // The order of libpython's dispatch: a few types by name, then classes, then built-in bases.
  if (name == "NoneType") {
    out.text += "None";
    return;
  }
  if (name == "bool") {
    out.text += repr_int(object) == "0" ? "False" : "True";
    return;
  }
  if (name == "builtin_function_or_method" || name == "method-wrapper") {
    out.text += callable_repr(object).value_or(unreadable(object));
    return;
  }
  if (name == "float") {  // libpython shows "<float at remote ...>"; the value says more
    out.text += repr_float(object);
    return;
  }
  if (flags & kHeapTypeFlag) {
    write_instance(out, object, name, depth);
    return;
  }
  if (flags & (kLongSubclass | kPython2IntSubclass)) {
    out.text += repr_int(object);
    return;
  }
  if (flags & kListSubclass) return write_sequence(out, object, false, depth);
  if (flags & kTupleSubclass) return write_sequence(out, object, true, depth);
  if (flags & kBytesSubclass) {
    // Python 2's str is its bytes type; its repr has no prefix.
    if (layout.string.model == StringModel::kBytes) {
      out.text += repr_text(object, false, out.limit + 1);
      return;
    }
    auto bytes = objects_.read_bytes(object, out.limit + 1);
    if (!bytes) {
      out.text += unreadable(object);
      return;
    }
    out.text += quote_string(
        std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size()), true);
    return;
  }
  if (flags & kUnicodeSubclass) {
    out.text += repr_text(object, layout.string.model == StringModel::kBytes, out.limit + 1);
    return;
  }
  if (flags & kDictSubclass) return write_dict(out, object, depth);
  if (flags & kBaseExceptionSubclass) return write_exception(out, object, name, depth);
  out.text += remote(name, object);
}

void ObjectRepr::write_instance(Output& out, uint64_t object, const std::string& type_name,
                                int depth) const {
  if (out.visited.contains(object)) {
    out.text += "<...>";
    return;
  }
  InstanceAttributes attributes(objects_);
  auto items = depth < kMaxReprDepth ? attributes.items(object, kMaxReprItems)
                                     : Expected<std::vector<std::pair<uint64_t, uint64_t>>>{};
  out.text += "<" + type_name;
  // Marked written even without attributes: libpython's one set per repr elides such an
  // instance (a lock) met again too.
  out.visited.insert(object);
  if (items && !items->empty()) {
    out.text += "(";
    for (size_t i = 0; i < items->size() && !out.full(); ++i) {
      if (i > 0) out.text += ", ";
      auto key = objects_.read_string((*items)[i].first);
      out.text += key ? *key : unreadable((*items)[i].first);
      out.text += "=";
      write(out, (*items)[i].second, depth + 1);
    }
    out.text += ")";
  }
  leave(out, object);
  out.text += fmt::format(" at remote 0x{:x}>", object);
}

void ObjectRepr::write_sequence(Output& out, uint64_t object, bool is_tuple, int depth) const {
  const char* open = is_tuple ? "(" : "[";
  const char* close = is_tuple ? ")" : "]";
  if (out.visited.contains(object) || depth >= kMaxReprDepth) {
    out.text += fmt::format("{}...{}", open, close);
    return;
  }
  auto items = is_tuple ? containers_.tuple_items(object, kMaxReprItems + 1)
                        : containers_.list_items(object, kMaxReprItems + 1);
  if (!items) {
    out.text += unreadable(object);
    return;
  }
  out.visited.insert(object);
  out.text += open;
  for (size_t i = 0; i < items->size() && i < kMaxReprItems && !out.full(); ++i) {
    if (i > 0) out.text += ", ";
    write(out, (*items)[i], depth + 1);
  }
  if (items->size() > kMaxReprItems) out.text += ", ...";
  if (is_tuple && items->size() == 1) out.text += ",";
  out.text += close;
  leave(out, object);
}

void ObjectRepr::write_dict(Output& out, uint64_t object, int depth) const {
  if (out.visited.contains(object) || depth >= kMaxReprDepth) {
    out.text += "{...}";
    return;
  }
  auto items = containers_.dict_items(object, kMaxReprItems + 1);
  if (!items) {
    out.text += unreadable(object);
    return;
  }
  out.visited.insert(object);
  out.text += "{";
  for (size_t i = 0; i < items->size() && i < kMaxReprItems && !out.full(); ++i) {
    if (i > 0) out.text += ", ";
    write(out, (*items)[i].first, depth + 1);
    out.text += ": ";
    write(out, (*items)[i].second, depth + 1);
  }
  if (items->size() > kMaxReprItems) out.text += ", ...";
  out.text += "}";
  leave(out, object);
}

// libpython writes an exception as its type name and its args tuple: ValueError('text',).
void ObjectRepr::write_exception(Output& out, uint64_t object, const std::string& type_name,
                                 int depth) const {
  if (out.visited.contains(object)) {
    out.text += "(...)";
    return;
  }
  auto args = read_pointer(objects_.memory(),
                           object + static_cast<uint64_t>(objects_.layout().callables.exception_args));
  if (!args) {
    out.text += unreadable(object);
    return;
  }
  out.visited.insert(object);
  out.text += type_name;
  write(out, *args, depth + 1);
  leave(out, object);
}

std::string ObjectRepr::repr_text(uint64_t object, bool is_python2_unicode, size_t shown) const {
  // No more is read than the repr can show: a secret past the cut stays out of a snapshot.
  auto text = is_python2_unicode ? objects_.read_python2_unicode(object)
                                 : objects_.read_string_prefix(object, shown);
  if (!text) {
    if (is_python2_unicode) return remote("unicode", object);  // the build's width is unknown
    return unreadable(object);
  }
  return (is_python2_unicode ? "u" : "") + quote_string(*text);
}

std::optional<std::string> ObjectRepr::callable_repr(uint64_t object) const {
  auto name = objects_.type_name(object);
  if (!name) return std::nullopt;
  if (*name == "builtin_function_or_method") return builtin_function_repr(object);
  if (*name == "method-wrapper") return method_wrapper_repr(object);
  return std::nullopt;
}

std::optional<std::string> ObjectRepr::builtin_function_repr(uint64_t object) const {
  const AddressSpace& memory = objects_.memory();
  const CallablesLayout& c = objects_.layout().callables;
  auto method_def = read_pointer(memory, object + static_cast<uint64_t>(c.cfunction_method_def));
  auto self = read_pointer(memory, object + static_cast<uint64_t>(c.cfunction_self));
  if (!method_def || !self || *method_def == 0) return std::nullopt;
  auto name_pointer = read_pointer(memory, *method_def + static_cast<uint64_t>(c.method_def_name));
  if (!name_pointer) return std::nullopt;
  auto name = read_c_string(memory, *name_pointer, kMaxNameLength);
  if (!name) return std::nullopt;
  if (*self == 0) return fmt::format("<built-in function {}>", *name);
  auto self_type = objects_.type_name(*self);
  return fmt::format("<built-in method {} of {} object at remote 0x{:x}>", *name,
                     self_type ? *self_type : "unknown", *self);
}

std::optional<std::string> ObjectRepr::method_wrapper_repr(uint64_t object) const {
  const AddressSpace& memory = objects_.memory();
  const CallablesLayout& c = objects_.layout().callables;
  auto descriptor = read_pointer(memory, object + static_cast<uint64_t>(c.method_wrapper_descriptor));
  auto self = read_pointer(memory, object + static_cast<uint64_t>(c.method_wrapper_self));
  if (!descriptor || !self || *descriptor == 0) return std::nullopt;
  auto base = read_pointer(memory, *descriptor + static_cast<uint64_t>(c.wrapper_descriptor_base));
  if (!base || *base == 0) return std::nullopt;
  auto name_pointer = read_pointer(memory, *base + static_cast<uint64_t>(c.wrapper_base_name));
  if (!name_pointer) return std::nullopt;
  auto name = read_c_string(memory, *name_pointer, kMaxNameLength);
  auto self_type = objects_.type_name(*self);
  // libpython's own spelling: the name as a Python repr, the address without "remote".
  return fmt::format("<method-wrapper {} of {} object at 0x{:x}>",
                     name ? quote_string(*name) : "<unknown name>",
                     self_type ? *self_type : "<unknown tp_name>", *self);
}

std::string ObjectRepr::repr_int(uint64_t object) const {
  if (objects_.layout().variables.machine_int_value != kAbsent) {
    // Python 2's int is a C long; its long is digits like 3's.
    auto type = objects_.type_name(object);
    if (type && *type != "long") {  // int, bool and their subclasses: PyIntObject
      auto value = read_value<int64_t>(
          objects_.memory(), object + static_cast<uint64_t>(objects_.layout().variables.machine_int_value));
      return value ? std::to_string(*value) : unreadable(object);
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

}  // namespace hangpy::cpython
