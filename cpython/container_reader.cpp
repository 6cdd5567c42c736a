#include "cpython/container_reader.h"

#include <algorithm>
#include <array>
#include <span>

namespace hangpy::cpython {
namespace {

constexpr int64_t kMaxDictEntries = 1 << 24;  // sanity bound on what a keys object may claim

}  // namespace

Expected<std::vector<uint64_t>> ContainerReader::pointer_array(uint64_t address, int64_t count,
                                                               size_t cap) const {
  if (count < 0) return make_error(ErrorKind::kCorrupt, "negative item count", address);
  size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), cap);
  std::vector<uint64_t> items(n);
  auto bytes = std::as_writable_bytes(std::span(items));
  if (auto ok = objects_.memory().read(address, bytes); !ok) return std::unexpected(ok.error());
  return items;
}

Expected<std::vector<uint64_t>> ContainerReader::tuple_items(uint64_t tuple, size_t cap) const {
  const Layout& layout = objects_.layout();
  auto size = read_value<int64_t>(objects_.memory(), tuple + layout.object.ob_size);
  if (!size) return std::unexpected(size.error());
  return pointer_array(tuple + layout.variables.tuple_items, *size, cap);
}

Expected<std::vector<uint64_t>> ContainerReader::list_items(uint64_t list, size_t cap) const {
  const Layout& layout = objects_.layout();
  auto size = read_value<int64_t>(objects_.memory(), list + layout.object.ob_size);
  auto array = read_pointer(objects_.memory(), list + layout.variables.list_items);
  if (!size) return std::unexpected(size.error());
  if (!array) return std::unexpected(array.error());
  if (*size == 0) return std::vector<uint64_t>{};
  return pointer_array(*array, *size, cap);
}

// The live (key, value) pairs of an entry array; a split table keeps the values apart, in entry
// order. The entries are read a page at a time: from the key of the first entry whose key lies in
// a page to the value of the last entry that ends in it, one read for what took two per entry (a
// torch rank's sys.modules has 1,500 entries, looked up for several names). Where such a read
// fails, its entries are read one by one as before, so that a damaged or partly saved table gives
// the same items and the same error.
Expected<std::vector<std::pair<uint64_t, uint64_t>>> ContainerReader::entry_items(
    const EntryTable& table, uint64_t split_values, size_t cap) const {
  const AddressSpace& memory = objects_.memory();
  const uint64_t values_array = split_values + objects_.layout().variables.dict_values_array;
  std::vector<std::pair<uint64_t, uint64_t>> items;
  auto key_address = [&](int64_t i) {
    return table.entries + static_cast<uint64_t>(i) * table.entry_size + table.key_offset;
  };
  // Entry i's value, read by itself (a split table's always are); an error ends the items.
  auto add_value = [&](int64_t i, uint64_t key) -> Expected<void> {
    auto value = split_values != 0 ? read_pointer(memory, values_array + 8 * static_cast<uint64_t>(i))
                                   : read_pointer(memory, key_address(i) + 8);
    if (!value) return std::unexpected(value.error());
    if (*value != 0) items.emplace_back(key, *value);
    return {};
  };
  constexpr uint64_t kPage = 4096;
  constexpr uint64_t kKeyAndValue = 16;
  std::array<uint64_t, kPage / 8 + 2> words{};  // one page of entries (and an entry across its end)
  for (int64_t i = 0; i < table.count && items.size() < cap;) {
    const uint64_t first = key_address(i);
    const uint64_t to_page_end = kPage - first % kPage;
    // The entries from i whose key and value end in first's page; at least entry i.
    int64_t n = to_page_end >= kKeyAndValue ? static_cast<int64_t>((to_page_end - kKeyAndValue) / table.entry_size) + 1 : 1;
    n = std::min(n, table.count - i);
    const uint64_t bytes = static_cast<uint64_t>(n - 1) * table.entry_size + kKeyAndValue;
    if (!memory.read(first, std::as_writable_bytes(std::span(words)).first(bytes))) {
      for (int64_t k = i; k < i + n && items.size() < cap; ++k) {
        auto key = read_pointer(memory, key_address(k));
        if (!key) return std::unexpected(key.error());
        if (*key == 0) continue;  // a deleted entry
        if (auto ok = add_value(k, *key); !ok) return std::unexpected(ok.error());
      }
    } else {
      for (int64_t k = 0; k < n && items.size() < cap; ++k) {
        const size_t word = static_cast<size_t>(static_cast<uint64_t>(k) * table.entry_size / 8);
        if (words[word] == 0) continue;  // a deleted entry
        if (split_values != 0) {
          if (auto ok = add_value(i + k, words[word]); !ok) return std::unexpected(ok.error());
        } else if (words[word + 1] != 0) {
          items.emplace_back(words[word], words[word + 1]);
        }
      }
    }
    i += n;
  }
  return items;
}

Expected<std::vector<std::pair<uint64_t, uint64_t>>> ContainerReader::dict_items(
    uint64_t dict, size_t cap) const {
  const VariablesLayout& v = objects_.layout().variables;
  if (v.dict_model == DictModel::kOpenTable) return items_open_table(dict, cap);
  auto keys = read_pointer(objects_.memory(), dict + v.dict_keys);
  auto values = read_pointer(objects_.memory(), dict + v.dict_values);
  if (!keys) return std::unexpected(keys.error());
  if (!values) return std::unexpected(values.error());
  switch (v.dict_model) {
    case DictModel::kKeysLog2:
      return items_keys_log2(*keys, *values, cap);
    case DictModel::kKeysSize:
      return items_keys_size(*keys, *values, cap);
    case DictModel::kOpenTable:
      break;
  }
  return make_error(ErrorKind::kUnsupported, "unknown dict model");
}

// 3.11 on: entries follow an index array of 2**dk_log2_index_bytes bytes; unicode-keyed tables
// hold (key, value) entries, general ones (hash, key, value); split tables keep values apart.
Expected<std::vector<std::pair<uint64_t, uint64_t>>> ContainerReader::items_keys_log2(
    uint64_t keys, uint64_t values, size_t cap) const {
  const VariablesLayout& v = objects_.layout().variables;
  const AddressSpace& memory = objects_.memory();
  auto index_bytes_log2 = read_value<uint8_t>(memory, keys + v.keys_log2_index_bytes);
  auto kind = read_value<uint8_t>(memory, keys + v.keys_kind);
  auto count = read_value<int64_t>(memory, keys + v.keys_entry_count);
  if (!index_bytes_log2 || !kind || !count)
    return make_error(ErrorKind::kCorrupt, "unreadable dict keys", keys);
  if (*index_bytes_log2 > 40 || *count < 0 || *count > kMaxDictEntries)
    return make_error(ErrorKind::kCorrupt, "implausible dict keys", keys);
  const bool general = *kind == 0;
  const uint64_t entry_size = general ? 24 : 16;
  const uint64_t key_offset = general ? 8 : 0;
  uint64_t entries = keys + v.keys_indices + (uint64_t{1} << *index_bytes_log2);
  return entry_items(EntryTable{entries, entry_size, key_offset, *count}, values, cap);
}

// 3.6 to 3.10: the index array has dk_size slots of 1, 2, 4 or 8 bytes, then (hash, key, value).
Expected<std::vector<std::pair<uint64_t, uint64_t>>> ContainerReader::items_keys_size(
    uint64_t keys, uint64_t values, size_t cap) const {
  const VariablesLayout& v = objects_.layout().variables;
  const AddressSpace& memory = objects_.memory();
  auto size = read_value<int64_t>(memory, keys + v.keys_size);
  auto count = read_value<int64_t>(memory, keys + v.keys_entry_count);
  if (!size || !count) return make_error(ErrorKind::kCorrupt, "unreadable dict keys", keys);
  if (*size <= 0 || *size > kMaxDictEntries * 2 || *count < 0 || *count > *size)
    return make_error(ErrorKind::kCorrupt, "implausible dict keys", keys);
  uint64_t index_width = *size <= 0xff ? 1 : *size <= 0xffff ? 2 : *size <= 0xffffffffLL ? 4 : 8;
  uint64_t entries = keys + v.keys_indices + static_cast<uint64_t>(*size) * index_width;
  return entry_items(EntryTable{entries, 24, 8, *count}, values, cap);
}

// 2.7: ma_table holds ma_mask + 1 slots of (hash, key, value); unused slots have no key or value.
Expected<std::vector<std::pair<uint64_t, uint64_t>>> ContainerReader::items_open_table(
    uint64_t dict, size_t cap) const {
  const VariablesLayout& v = objects_.layout().variables;
  const AddressSpace& memory = objects_.memory();
  auto table = read_pointer(memory, dict + v.dict_keys);
  auto mask = read_value<int64_t>(memory, dict + v.dict_values);
  if (!table) return std::unexpected(table.error());
  if (!mask) return std::unexpected(mask.error());
  if (*mask < 0 || *mask > kMaxDictEntries * 2)
    return make_error(ErrorKind::kCorrupt, "implausible dict mask", dict);
  std::vector<std::pair<uint64_t, uint64_t>> items;
  for (int64_t i = 0; i <= *mask && items.size() < cap; ++i) {
    uint64_t slot = *table + static_cast<uint64_t>(i) * 24;
    auto key = read_pointer(memory, slot + 8);
    auto value = read_pointer(memory, slot + 16);
    if (!key || !value) return make_error(ErrorKind::kCorrupt, "unreadable dict slot", slot);
    if (*key != 0 && *value != 0) items.emplace_back(*key, *value);
  }
  return items;
}

Expected<uint64_t> ContainerReader::dict_get(uint64_t dict, std::string_view key) const {
  auto items = dict_items(dict);
  if (!items) return std::unexpected(items.error());
  for (const auto& [item_key, value] : *items) {
    auto same = objects_.string_equals(item_key, key);
    if (same && *same) return value;
  }
  return 0;
}

}  // namespace hangpy::cpython
