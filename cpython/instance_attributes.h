// Reads an attribute of a plain Python instance (one that keeps its attributes in __dict__,
// however the version stores that: a dict, or a values array keyed by its class's cached keys).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "cpython/container_reader.h"
#include "cpython/object_reader.h"

namespace hangpy::cpython {

class InstanceAttributes {
 public:
  explicit InstanceAttributes(const ObjectReader& objects) : objects_(objects), containers_(objects) {}

  // The attribute's object, or 0 when the instance has no such attribute in its __dict__.
  Expected<uint64_t> get(uint64_t instance, std::string_view name) const;
  // get() of each name, the instance's attributes read once: [i] is names[i]'s object or 0.
  Expected<std::vector<uint64_t>> get_each(uint64_t instance, std::span<const std::string_view> names) const;
  // The value of a __slots__ attribute (kept in the object at the offset its class's member
  // table gives, this class's or a base's), or 0 when unset or when there is no such slot.
  Expected<uint64_t> slot(uint64_t instance, std::string_view name) const;
  // Every (name, value) of the instance's __dict__, in its order (at most `cap`); empty when it
  // has none. Names are str objects.
  Expected<std::vector<std::pair<uint64_t, uint64_t>>> items(uint64_t instance, size_t cap) const;

 private:
  // Where the attributes are: a dict, or a values array keyed by the type's cached keys.
  struct Storage {
    uint64_t dict = 0;
    uint64_t values = 0;  // with `type`
    uint64_t type = 0;
  };
  Expected<Storage> storage(uint64_t instance) const;
  // The values array's (key, value) pairs in key order; values that are NULL are left out.
  Expected<std::vector<std::pair<uint64_t, uint64_t>>> values_items(uint64_t type, uint64_t values,
                                                                    size_t cap) const;

  const ObjectReader& objects_;
  ContainerReader containers_;
};

}  // namespace hangpy::cpython
