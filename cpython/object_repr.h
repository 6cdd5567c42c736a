// Short reprs of target objects, built from their memory only (no code of the target runs):
// None, bools, ints, floats, str, bytes, tuples, lists, dicts, modules, functions, code, types;
// anything else as "<TypeName object at 0x...>". Bounded in depth, items and length.
#pragma once

#include <cstdint>
#include <string>

#include "cpython/container_reader.h"
#include "cpython/object_reader.h"

namespace hangpy::cpython {

class ObjectRepr {
 public:
  explicit ObjectRepr(const ObjectReader& objects) : objects_(objects), containers_(objects) {}

  std::string repr(uint64_t object, size_t max_length) const;

 private:
  std::string repr_at_depth(uint64_t object, int depth) const;
  std::string repr_int(uint64_t object) const;
  std::string repr_float(uint64_t object) const;
  std::string repr_sequence(uint64_t object, bool is_tuple, int depth) const;
  std::string repr_dict(uint64_t object, int depth) const;

  const ObjectReader& objects_;
  ContainerReader containers_;
};

// Python's repr of a str's text: quotes chosen like Python, escapes for control characters.
std::string quote_string(const std::string& text, bool bytes_prefix = false);

}  // namespace hangpy::cpython
