#include "cpython/instance_attributes.h"

#include <algorithm>
#include <cstddef>
#include <optional>

namespace hangpy::cpython {
namespace {

constexpr uint64_t kManagedDictFlag = 1 << 4;  // Py_TPFLAGS_MANAGED_DICT (3.11 on)
constexpr uint64_t kInlineValuesFlag = 1 << 2;  // Py_TPFLAGS_INLINE_VALUES (3.13 on)

}  // namespace

// Values arrays hold the attributes in the order of the class's shared (split) keys.
Expected<std::vector<std::pair<uint64_t, uint64_t>>> InstanceAttributes::values_items(
    uint64_t type, uint64_t values, size_t cap) const {
  std::vector<std::pair<uint64_t, uint64_t>> items;
  const Layout& layout = objects_.layout();
  if (layout.instances.heap_type_cached_keys == kAbsent) return items;
  const AddressSpace& memory = objects_.memory();
  auto keys = read_pointer(memory, type + static_cast<uint64_t>(layout.instances.heap_type_cached_keys));
  if (!keys || *keys == 0) return items;
  const VariablesLayout& v = layout.variables;
  auto index_bytes_log2 = read_value<uint8_t>(memory, *keys + v.keys_log2_index_bytes);
  auto count = read_value<int64_t>(memory, *keys + v.keys_entry_count);
  if (!index_bytes_log2 || !count || *index_bytes_log2 > 40 || *count < 0 ||
      *count > static_cast<int64_t>(kMaxContainerItems))
    return make_error(ErrorKind::kCorrupt, "implausible cached keys", *keys);
  uint64_t entries = *keys + v.keys_indices + (uint64_t{1} << *index_bytes_log2);
  for (int64_t i = 0; i < *count && items.size() < cap; ++i) {
    auto key = read_pointer(memory, entries + 16 * static_cast<uint64_t>(i));  // (key, value)
    if (!key || *key == 0) continue;
    auto value = read_pointer(memory, values + v.dict_values_array + 8 * static_cast<uint64_t>(i));
    if (!value) return std::unexpected(value.error());
    if (*value != 0) items.emplace_back(*key, *value);
  }
  return items;
}

Expected<uint64_t> InstanceAttributes::slot(uint64_t instance, std::string_view name) const {
  constexpr size_t kMemberSize = 40;       // sizeof(PyMemberDef) on LP64
  constexpr size_t kMaxMembers = 256;      // per class
  constexpr size_t kMaxClassDepth = 32;    // tp_base links followed
  constexpr int kObjectMember = 16;        // Py_T_OBJECT_EX: what __slots__ makes
  const InstanceLayout& in = objects_.layout().instances;
  const AddressSpace& memory = objects_.memory();
  auto type = objects_.type_of(instance);
  if (!type) return std::unexpected(type.error());
  uint64_t current = *type;
  for (size_t depth = 0; current != 0 && depth < kMaxClassDepth; ++depth) {
    auto members = read_pointer(memory, current + static_cast<uint64_t>(in.type_members));
    if (!members) return std::unexpected(members.error());
    for (size_t i = 0; *members != 0 && i < kMaxMembers; ++i) {
      const uint64_t member = *members + i * kMemberSize;
      auto member_name = read_pointer(memory, member);
      if (!member_name) return std::unexpected(member_name.error());
      if (*member_name == 0) break;
      auto text = read_c_string(memory, *member_name, name.size() + 1);
      if (!text || *text != name) continue;
      auto kind = read_value<int32_t>(memory, member + 8);
      auto offset = read_value<int64_t>(memory, member + 16);
      if (!kind || !offset) return make_error(ErrorKind::kCorrupt, "unreadable member", member);
      if (*kind != kObjectMember || *offset <= 0 || *offset > (1 << 20))
        return make_error(ErrorKind::kUnsupported, "the member is no object slot", member);
      return read_pointer(memory, instance + static_cast<uint64_t>(*offset));
    }
    auto base = read_pointer(memory, current + static_cast<uint64_t>(in.type_base));
    if (!base) return std::unexpected(base.error());
    current = *base;
  }
  return uint64_t{0};
}

Expected<InstanceAttributes::Storage> InstanceAttributes::storage(uint64_t instance) const {
  const Layout& layout = objects_.layout();
  const InstanceLayout& in = layout.instances;
  const AddressSpace& memory = objects_.memory();
  auto type = objects_.type_of(instance);
  if (!type) return std::unexpected(type.error());
  auto flags = read_value<uint64_t>(memory, *type + static_cast<uint64_t>(in.type_flags));
  if (!flags) return std::unexpected(flags.error());
  auto at = [instance](int32_t offset) { return instance + static_cast<uint64_t>(int64_t{offset}); };
  Storage none;
  // A dict pointer at tp_dictoffset: every type up to 3.10, and from 3.11 on the types that keep
  // no managed dict (C types with a __dict__ slot, such as _asyncio.Future, and their subclasses).
  auto dict_at_offset = [&]() -> Expected<Storage> {
    auto offset = read_value<int64_t>(memory, *type + static_cast<uint64_t>(in.type_dictoffset));
    if (!offset) return std::unexpected(offset.error());
    if (*offset <= 0) return none;  // no __dict__ (or one at the end, which plain classes lack)
    auto pointer = read_pointer(memory, instance + static_cast<uint64_t>(*offset));
    if (!pointer) return std::unexpected(pointer.error());
    return Storage{*pointer, 0, 0};
  };
  switch (in.model) {
    case InstanceDictModel::kDictOffset:
      return dict_at_offset();
    case InstanceDictModel::kManagedDictValues: {
      if (!(*flags & kManagedDictFlag)) return dict_at_offset();
      auto pointer = read_pointer(memory, at(in.managed_dict));
      if (!pointer) return std::unexpected(pointer.error());
      if (*pointer != 0) return Storage{*pointer, 0, 0};
      auto values = read_pointer(memory, at(in.managed_values));
      if (!values) return std::unexpected(values.error());
      return Storage{0, *values, *type};
    }
    case InstanceDictModel::kTaggedDictOrValues: {
      if (!(*flags & kManagedDictFlag)) return dict_at_offset();
      auto word = read_pointer(memory, at(in.managed_dict));
      if (!word) return std::unexpected(word.error());
      // 3.12 stores values - 1: an odd word is a values array, the word after it its start.
      if (*word & 1) return Storage{0, *word + 1, *type};
      return Storage{*word, 0, 0};
    }
    case InstanceDictModel::kInlineValues: {
      if (!(*flags & kManagedDictFlag)) return dict_at_offset();
      auto pointer = read_pointer(memory, at(in.managed_dict));
      if (!pointer) return std::unexpected(pointer.error());
      if (*pointer != 0) return Storage{*pointer, 0, 0};
      if (!(*flags & kInlineValuesFlag)) return none;
      auto size = read_value<int64_t>(memory, *type + static_cast<uint64_t>(in.type_basicsize));
      if (!size || *size <= 0) return none;
      return Storage{0, instance + static_cast<uint64_t>(*size), *type};
    }
  }
  return none;
}

Expected<uint64_t> InstanceAttributes::get(uint64_t instance, std::string_view name) const {
  auto found = get_each(instance, std::span<const std::string_view>(&name, 1));
  if (!found) return std::unexpected(found.error());
  return found->front();
}

Expected<std::vector<uint64_t>> InstanceAttributes::get_each(uint64_t instance,
                                                             std::span<const std::string_view> names) const {
  auto where = storage(instance);
  if (!where) return std::unexpected(where.error());
  std::vector<uint64_t> found(names.size(), 0);
  if (where->dict == 0 && where->values == 0) return found;
  auto items = where->dict != 0 ? containers_.dict_items(where->dict)
                                : values_items(where->type, where->values, kMaxContainerItems);
  if (!items) return std::unexpected(items.error());
  // Each name's object is the value of the first key equal to it; the keys are read until every
  // name has one, and compared with the names still without one (as get() of each would read
  // them). A key unreadable as a str equals none.
  std::vector<std::string_view> pending(names.begin(), names.end());
  std::vector<size_t> pending_index(names.size());
  for (size_t i = 0; i < names.size(); ++i) pending_index[i] = i;
  for (const auto& [key, value] : *items) {
    if (pending.empty()) break;
    std::optional<size_t> first;  // into pending
    if (where->dict != 0) {
      // A dict's key has its length compared before its characters are read (string_among).
      if (auto which = objects_.string_among(key, pending)) first = *which;
    } else if (auto text = objects_.read_string(key)) {
      if (auto it = std::find(pending.begin(), pending.end(), *text); it != pending.end())
        first = static_cast<size_t>(it - pending.begin());
    }
    if (!first) continue;
    const std::string_view name = pending[*first];
    for (size_t k = pending.size(); k-- > *first;) {  // the name given again further on, too
      if (pending[k] != name) continue;
      found[pending_index[k]] = value;
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
      pending_index.erase(pending_index.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  return found;
}

Expected<std::vector<std::pair<uint64_t, uint64_t>>> InstanceAttributes::items(uint64_t instance,
                                                                               size_t cap) const {
  auto where = storage(instance);
  if (!where) return std::unexpected(where.error());
  if (where->dict != 0) return containers_.dict_items(where->dict, cap);
  if (where->values == 0) return std::vector<std::pair<uint64_t, uint64_t>>{};
  return values_items(where->type, where->values, cap);
}

}  // namespace hangpy::cpython
