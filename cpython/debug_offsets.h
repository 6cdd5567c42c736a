// _Py_DebugOffsets: from 3.13 on CPython publishes the offsets of its own structs at the start
// of _PyRuntime. We read them, validate them (cookie, version, struct sizes, every field inside
// its struct), and derive the layout from them, preferring them to the compiled table.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cpython/address_space.h"
#include "cpython/layout.h"

namespace hangpy::cpython {

struct DebugOffsetsSchema {
  std::string_view source_tag;
  uint64_t first_version_hex;  // the schema applies from this PY_VERSION_HEX on
  std::span<const std::string_view> fields;  // "section.field", in struct order after the cookie
};

std::span<const DebugOffsetsSchema> debug_offsets_schemas();

struct DebugOffsets {
  uint64_t version_hex = 0;
  bool free_threaded = false;
  std::string_view schema_tag;
  std::map<std::string, uint64_t, std::less<>> values;  // "thread_state.native_thread_id" -> 184
  uint64_t get(std::string_view field) const;           // 0 when the schema lacks the field
  bool has(std::string_view field) const { return values.find(field) != values.end(); }
};

// Errors: kNotFound (no cookie: not a 3.13+ runtime), kCorrupt (fails validation, with why).
Expected<DebugOffsets> read_debug_offsets(const AddressSpace& memory, uint64_t runtime);

// `base` with every field the debug offsets give replaced by the process's own value. Fields that
// differ from `base` are listed in `differences` ("thread_state.next 8 -> 16").
Layout layout_from_debug_offsets(const DebugOffsets& offsets, const Layout& base,
                                 std::vector<std::string>& differences);

}  // namespace hangpy::cpython
