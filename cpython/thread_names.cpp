#include "cpython/thread_names.h"

#include "cpython/container_reader.h"
#include "cpython/instance_attributes.h"

namespace hangpy::cpython {
namespace {

constexpr size_t kMaxThreadsNamed = 4096;

// A value of a str-keyed dict, or 0.
uint64_t lookup(const ContainerReader& containers, uint64_t dict, std::string_view key) {
  if (dict == 0) return 0;
  return containers.dict_get(dict, key).value_or(0);
}

// The globals of a frame that runs threading.py: the threading module's dict.
uint64_t threading_globals_from_frames(const AddressSpace& memory, const Layout& layout,
                                       const std::vector<PythonThread>& threads) {
  if (layout.variables.frame_globals == kAbsent) return 0;
  for (const PythonThread& thread : threads) {
    for (const PythonFrame& frame : thread.frames) {
      if (!frame.file.ends_with("/threading.py")) continue;
      auto globals = read_pointer(memory, frame.address + static_cast<uint64_t>(layout.variables.frame_globals));
      if (globals && *globals != 0) return *globals;
    }
  }
  return 0;
}

// The `threading` module that an outermost frame's globals (usually __main__'s) imported.
uint64_t threading_globals_from_imports(const AddressSpace& memory, const Layout& layout,
                                        const ContainerReader& containers,
                                        const std::vector<PythonThread>& threads) {
  if (layout.variables.frame_globals == kAbsent) return 0;
  for (const PythonThread& thread : threads) {
    if (thread.frames.empty()) continue;
    const PythonFrame& outermost = thread.frames.back();
    auto globals = read_pointer(memory, outermost.address + static_cast<uint64_t>(layout.variables.frame_globals));
    if (!globals || *globals == 0) continue;
    uint64_t threading = lookup(containers, *globals, "threading");
    if (threading == 0) continue;
    auto module_dict = read_pointer(memory, threading + static_cast<uint64_t>(layout.variables.module_dict));
    if (module_dict && *module_dict != 0) return *module_dict;
  }
  return 0;
}

uint64_t threading_globals_from_modules(const AddressSpace& memory, const Layout& layout,
                                        const ContainerReader& containers, uint64_t interpreter) {
  if (layout.interpreter.sysdict == kAbsent) return 0;
  auto sysdict = read_pointer(memory, interpreter + static_cast<uint64_t>(layout.interpreter.sysdict));
  if (!sysdict) return 0;
  uint64_t modules = lookup(containers, *sysdict, "modules");
  uint64_t threading = lookup(containers, modules, "threading");
  if (threading == 0) return 0;
  auto module_dict = read_pointer(memory, threading + static_cast<uint64_t>(layout.variables.module_dict));
  return module_dict ? *module_dict : 0;
}

}  // namespace

std::unordered_map<uint64_t, uint64_t> read_thread_objects(const AddressSpace& memory,
                                                           const Layout& layout,
                                                           uint64_t interpreter,
                                                           const std::vector<PythonThread>& threads) {
  std::unordered_map<uint64_t, uint64_t> objects_by_ident;
  ObjectReader objects(memory, layout);
  ContainerReader containers(objects);
  uint64_t module_dict = threading_globals_from_frames(memory, layout, threads);
  if (module_dict == 0)
    module_dict = threading_globals_from_imports(memory, layout, containers, threads);
  if (module_dict == 0)
    module_dict = threading_globals_from_modules(memory, layout, containers, interpreter);
  uint64_t active = lookup(containers, module_dict, "_active");
  if (active == 0) return objects_by_ident;
  auto active_threads = containers.dict_items(active, kMaxThreadsNamed);
  if (!active_threads) return objects_by_ident;
  for (const auto& [ident_object, thread] : *active_threads) {
    auto ident = objects.read_uint64(ident_object);
    if (ident && thread != 0) objects_by_ident.emplace(*ident, thread);
  }
  return objects_by_ident;
}

std::unordered_map<uint64_t, std::string> names_of_thread_objects(
    const AddressSpace& memory, const Layout& layout, const std::unordered_map<uint64_t, uint64_t>& thread_objects) {
  std::unordered_map<uint64_t, std::string> names;
  ObjectReader objects(memory, layout);
  InstanceAttributes attributes(objects);
  const std::string name_attribute(layout.thread_name_attribute);
  for (const auto& [ident, thread] : thread_objects) {
    auto name_object = attributes.get(thread, name_attribute);
    if (!name_object || *name_object == 0) continue;
    if (auto name = objects.read_string(*name_object)) names.emplace(ident, std::move(*name));
  }
  return names;
}

}  // namespace hangpy::cpython
