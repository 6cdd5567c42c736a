// Reads an attribute of a plain Python instance (one that keeps its attributes in __dict__,
// however the version stores that: a dict, or a values array keyed by its class's cached keys).
#pragma once

#include <cstdint>
#include <string_view>

#include "cpython/container_reader.h"
#include "cpython/object_reader.h"

namespace hangpy::cpython {

class InstanceAttributes {
 public:
  explicit InstanceAttributes(const ObjectReader& objects) : objects_(objects), containers_(objects) {}

  // The attribute's object, or 0 when the instance has no such attribute in its __dict__.
  Expected<uint64_t> get(uint64_t instance, std::string_view name) const;

 private:
  Expected<uint64_t> from_values(uint64_t type, uint64_t values, std::string_view name) const;

  const ObjectReader& objects_;
  ContainerReader containers_;
};

}  // namespace hangpy::cpython
