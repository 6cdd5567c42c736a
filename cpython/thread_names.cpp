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

}  // namespace

std::unordered_map<uint64_t, std::string> read_thread_names(const AddressSpace& memory,
                                                            const Layout& layout,
                                                            uint64_t interpreter) {
  std::unordered_map<uint64_t, std::string> names;
  if (layout.interpreter.sysdict == kAbsent) return names;
  ObjectReader objects(memory, layout);
  ContainerReader containers(objects);
  InstanceAttributes attributes(objects);
  auto sysdict = read_pointer(memory, interpreter + static_cast<uint64_t>(layout.interpreter.sysdict));
  if (!sysdict) return names;
  uint64_t modules = lookup(containers, *sysdict, "modules");
  uint64_t threading = lookup(containers, modules, "threading");
  if (threading == 0) return names;
  auto module_dict = read_pointer(memory, threading + static_cast<uint64_t>(layout.variables.module_dict));
  if (!module_dict) return names;
  uint64_t active = lookup(containers, *module_dict, "_active");
  if (active == 0) return names;
  auto threads = containers.dict_items(active, kMaxThreadsNamed);
  if (!threads) return names;
  const char* name_attribute = layout.major == 2 ? "_Thread__name" : "_name";
  for (const auto& [ident_object, thread] : *threads) {
    auto ident = objects.read_uint64(ident_object);
    auto name_object = attributes.get(thread, name_attribute);
    if (!ident || !name_object || *name_object == 0) continue;
    if (auto name = objects.read_string(*name_object)) names.emplace(*ident, std::move(*name));
  }
  return names;
}

}  // namespace hangpy::cpython
