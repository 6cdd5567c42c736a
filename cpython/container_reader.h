// Reads the items of tuples, lists and dicts out of a target, as object addresses. Every count
// taken from the target is capped; a dict's layout model comes from the layout table.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "cpython/object_reader.h"

namespace hangpy::cpython {

inline constexpr size_t kMaxContainerItems = 1 << 16;

class ContainerReader {
 public:
  explicit ContainerReader(const ObjectReader& objects) : objects_(objects) {}

  Expected<std::vector<uint64_t>> tuple_items(uint64_t tuple, size_t cap = kMaxContainerItems) const;
  Expected<std::vector<uint64_t>> list_items(uint64_t list, size_t cap = kMaxContainerItems) const;
  // (key, value) pairs in insertion order (3.6 on) or table order (2.7).
  Expected<std::vector<std::pair<uint64_t, uint64_t>>> dict_items(
      uint64_t dict, size_t cap = kMaxContainerItems) const;
  // The value stored under a str key, or 0 when there is none.
  Expected<uint64_t> dict_get(uint64_t dict, std::string_view key) const;

 private:
  struct EntryTable {
    uint64_t entries;      // address of the first entry
    uint64_t entry_size;   // (hash,) key, value
    uint64_t key_offset;   // the value follows the key
    int64_t count;         // dk_nentries
  };
  Expected<std::vector<std::pair<uint64_t, uint64_t>>> entry_items(const EntryTable& table,
                                                                   uint64_t split_values,
                                                                   size_t cap) const;
  Expected<std::vector<uint64_t>> pointer_array(uint64_t address, int64_t count, size_t cap) const;
  // The keys-object models: `keys` is ma_keys, `values` ma_values (split tables), both read.
  Expected<std::vector<std::pair<uint64_t, uint64_t>>> items_keys_log2(uint64_t keys,
                                                                       uint64_t values,
                                                                       size_t cap) const;
  Expected<std::vector<std::pair<uint64_t, uint64_t>>> items_keys_size(uint64_t keys,
                                                                       uint64_t values,
                                                                       size_t cap) const;
  Expected<std::vector<std::pair<uint64_t, uint64_t>>> items_open_table(uint64_t dict,
                                                                        size_t cap) const;

  const ObjectReader& objects_;
};

}  // namespace hangpy::cpython
