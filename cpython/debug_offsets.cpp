#include "cpython/debug_offsets.h"

#include <array>
#include <cstring>

namespace hangpy::cpython {
namespace {

constexpr char kCookie[8] = {'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'};
constexpr uint64_t kMaxStructSize = 1 << 20;

// The newest schema that applies to this version; nullptr before 3.13.
const DebugOffsetsSchema* schema_for(uint64_t version_hex) {
  const DebugOffsetsSchema* chosen = nullptr;
  for (const DebugOffsetsSchema& schema : debug_offsets_schemas()) {
    if (version_hex >= schema.first_version_hex) chosen = &schema;
  }
  return chosen;
}

// Every "section.field" must lie inside "section.size"; GIL fields are offsets in the interpreter.
Expected<void> validate(const DebugOffsets& offsets) {
  static constexpr std::array<std::string_view, 12> kSections = {
      "runtime_state", "interpreter_state", "thread_state", "interpreter_frame", "code_object",
      "pyobject",      "type_object",       "tuple_object", "list_object",       "dict_object",
      "bytes_object",  "unicode_object"};
  for (std::string_view section : kSections) {
    std::string size_name = std::string(section) + ".size";
    if (!offsets.has(size_name)) continue;
    uint64_t size = offsets.get(size_name);
    if (size == 0 || size > kMaxStructSize)
      return make_error(ErrorKind::kCorrupt, fmt::format("{} is {}", size_name, size));
    for (const auto& [name, value] : offsets.values) {
      if (!name.starts_with(std::string(section) + ".") || name == size_name) continue;
      if (value >= size) {
        return make_error(ErrorKind::kCorrupt,
                          fmt::format("{} = {} lies outside its struct of {} bytes", name, value,
                                      size));
      }
    }
  }
  return {};
}

}  // namespace

uint64_t DebugOffsets::get(std::string_view field) const {
  auto it = values.find(field);
  return it == values.end() ? 0 : it->second;
}

Expected<DebugOffsets> read_debug_offsets(const AddressSpace& memory, uint64_t runtime) {
  auto cookie = read_value<std::array<char, 8>>(memory, runtime);
  if (!cookie) return std::unexpected(cookie.error());
  if (std::memcmp(cookie->data(), kCookie, sizeof(kCookie)) != 0)
    return make_error(ErrorKind::kNotFound, "no _Py_DebugOffsets cookie", runtime);
  auto version = read_value<uint64_t>(memory, runtime + 8);
  if (!version) return std::unexpected(version.error());
  const DebugOffsetsSchema* schema = schema_for(*version);
  if (!schema || (*version >> 24) != 3) {
    return make_error(ErrorKind::kCorrupt,
                      fmt::format("_Py_DebugOffsets of unknown version 0x{:x}", *version));
  }
  size_t count = schema->fields.size();
  std::vector<uint64_t> raw(count);
  if (auto ok = memory.read(runtime + 8, std::as_writable_bytes(std::span(raw))); !ok)
    return std::unexpected(ok.error());
  DebugOffsets offsets;
  offsets.version_hex = *version;
  offsets.schema_tag = schema->source_tag;
  for (size_t i = 0; i < count; ++i) offsets.values.emplace(std::string(schema->fields[i]), raw[i]);
  offsets.free_threaded = offsets.get("free_threaded") != 0;
  if (auto ok = validate(offsets); !ok) return std::unexpected(ok.error());
  return offsets;
}

Layout layout_from_debug_offsets(const DebugOffsets& offsets, const Layout& base,
                                 std::vector<std::string>& differences) {
  Layout layout = base;
  auto take = [&](std::string_view field, int32_t& target) {
    if (!offsets.has(field)) return;
    auto value = static_cast<int32_t>(offsets.get(field));
    if (target != kAbsent && target != value)  // a field the table lacks is no disagreement
      differences.push_back(fmt::format("{} {} -> {}", field, target, value));
    target = value;
  };
  take("runtime_state.interpreters_head", layout.runtime.interpreters_head);
  take("runtime_state.finalizing", layout.runtime.finalizing);
  take("interpreter_state.id", layout.interpreter.id);
  take("interpreter_state.next", layout.interpreter.next);
  take("interpreter_state.threads_head", layout.interpreter.threads_head);
  take("interpreter_state.sysdict", layout.interpreter.sysdict);
  take("interpreter_state.ceval_gil", layout.gil.interpreter_gil);
  take("interpreter_state.gc", layout.gc.state);
  take("gc.collecting", layout.gc.collecting);
  take("thread_state.next", layout.thread_state.next);
  take("thread_state.interp", layout.thread_state.interp);
  take("thread_state.current_frame", layout.thread_state.frame_path[0]);
  take("thread_state.thread_id", layout.thread_state.thread_id);
  take("thread_state.native_thread_id", layout.thread_state.native_thread_id);
  take("interpreter_frame.previous", layout.frame.previous);
  take("interpreter_frame.executable", layout.frame.code);
  take("interpreter_frame.instr_ptr", layout.frame.instruction);
  take("interpreter_frame.localsplus", layout.frame.localsplus);
  take("interpreter_frame.owner", layout.frame.owner);
  if (offsets.free_threaded) {  // the default build lists these too, for fields it lacks
    take("interpreter_frame.tlbc_index", layout.frame.tlbc_index);
    take("code_object.co_tlbc", layout.code.thread_local_bytecode);
  }
  take("code_object.filename", layout.code.filename);
  take("code_object.name", layout.code.name);
  take("code_object.qualname", layout.code.qualname);
  take("code_object.linetable", layout.code.line_table);
  take("code_object.firstlineno", layout.code.first_line);
  take("code_object.co_code_adaptive", layout.code.code_adaptive);
  take("code_object.localsplusnames", layout.variables.code_local_names);
  take("pyobject.ob_type", layout.object.ob_type);
  take("type_object.tp_name", layout.object.tp_name);
  take("tuple_object.ob_size", layout.object.ob_size);
  take("tuple_object.ob_item", layout.variables.tuple_items);
  take("list_object.ob_item", layout.variables.list_items);
  take("dict_object.ma_keys", layout.variables.dict_keys);
  take("dict_object.ma_values", layout.variables.dict_values);
  take("float_object.ob_fval", layout.variables.float_value);
  take("long_object.lv_tag", layout.variables.int_size);
  take("long_object.ob_digit", layout.variables.int_digits);
  take("bytes_object.ob_size", layout.bytes.size);
  take("bytes_object.ob_sval", layout.bytes.data);
  take("unicode_object.state", layout.string.state);
  take("unicode_object.length", layout.string.length);
  take("unicode_object.asciiobject_size", layout.string.ascii_data);
  // Instance attributes (thread names, `self`'s fields) and asyncio's sets and coroutines: the
  // fields the schemas from 3.14 on give (a version newer than every table reads them here).
  take("type_object.tp_flags", layout.instances.type_flags);
  take("type_object.tp_basicsize", layout.instances.type_basicsize);
  take("type_object.tp_dictoffset", layout.instances.type_dictoffset);
  take("heap_type_object.ht_cached_keys", layout.instances.heap_type_cached_keys);
  take("set_object.mask", layout.asyncio.set_mask);
  take("set_object.table", layout.asyncio.set_table);
  take("gen_object.gi_iframe", layout.asyncio.coroutine_frame);
  take("gen_object.gi_frame_state", layout.asyncio.coroutine_frame_state);
  // The GIL fields are offsets in the interpreter of its embedded GIL struct; the table wants
  // them relative to that struct, which interp->ceval.gil points to.
  if (offsets.has("interpreter_state.gil_runtime_state_locked")) {
    uint64_t gil = offsets.get("interpreter_state.gil_runtime_state");
    int32_t locked = static_cast<int32_t>(offsets.get("interpreter_state.gil_runtime_state_locked") - gil);
    int32_t holder = static_cast<int32_t>(offsets.get("interpreter_state.gil_runtime_state_holder") - gil);
    if (layout.gil.locked != kAbsent && layout.gil.locked != locked) differences.push_back(fmt::format("gil.locked {} -> {}", layout.gil.locked, locked));
    if (layout.gil.last_holder != kAbsent && layout.gil.last_holder != holder) differences.push_back(fmt::format("gil.last_holder {} -> {}", layout.gil.last_holder, holder));
    layout.gil.locked = locked;
    layout.gil.last_holder = holder;
  }
  return layout;
}

}  // namespace hangpy::cpython
