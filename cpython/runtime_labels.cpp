#include "cpython/runtime_labels.h"

#include "cpython/container_reader.h"
#include "cpython/frame_variables.h"
#include "cpython/instance_attributes.h"
#include "cpython/object_reader.h"

namespace hangpy::cpython {
namespace {

constexpr size_t kMaxEnvironmentEntries = 4096;
constexpr size_t kMaxLabelBytes = 256;  // a label variable's value longer than this is no label
constexpr int64_t kMaxLabelNameLength = 32;   // the longest label variable's name is shorter

std::optional<uint64_t> pointer_at(const AddressSpace& memory, uint64_t address) {
  auto value = read_value<uint64_t>(memory, address);
  if (!value || *value == 0) return std::nullopt;
  return *value;
}

// os.environ._data: bytes -> bytes on POSIX (on 2.7, posix.environ: str -> str).
std::optional<uint64_t> environ_data(const AddressSpace& memory, const Layout& layout, uint64_t interpreter) {
  if (layout.interpreter.sysdict == kAbsent) return std::nullopt;
  ObjectReader objects(memory, layout);
  ContainerReader containers(objects);
  InstanceAttributes attributes(objects);
  auto sysdict = pointer_at(memory, interpreter + static_cast<uint64_t>(layout.interpreter.sysdict));
  if (!sysdict) return std::nullopt;
  auto modules = containers.dict_get(*sysdict, "modules");
  if (!modules || *modules == 0) return std::nullopt;
  auto os = containers.dict_get(*modules, "os");
  if (!os || *os == 0) return std::nullopt;
  auto os_dict = pointer_at(memory, *os + static_cast<uint64_t>(layout.variables.module_dict));
  if (!os_dict) return std::nullopt;
  auto environ = containers.dict_get(*os_dict, "environ");
  if (environ && *environ != 0) {
    for (std::string_view name : {"_data", "data"}) {
      auto data = attributes.get(*environ, name);
      if (data && *data != 0) return *data;
    }
  }
  // 2.7's os.environ is a classic instance whose `data` is posix.environ itself (the dict its
  // assignments update).
  auto posix = containers.dict_get(*modules, "posix");
  if (!posix || *posix == 0) return std::nullopt;
  auto posix_dict = pointer_at(memory, *posix + static_cast<uint64_t>(layout.variables.module_dict));
  if (!posix_dict) return std::nullopt;
  auto data = containers.dict_get(*posix_dict, "environ");
  if (!data || *data == 0) return std::nullopt;
  return *data;
}

// A bytes or str object's text, when it is short.
std::optional<std::string> short_text(const ObjectReader& objects, uint64_t object) {
  auto type = objects.type_name(object);
  if (!type) return std::nullopt;
  if (*type == "bytes" || *type == "str") {
    if (*type == "str") {
      auto text = objects.read_string(object);
      if (text && text->size() <= kMaxLabelBytes) return *text;
      return std::nullopt;
    }
    auto bytes = objects.read_bytes(object, kMaxLabelBytes);
    if (!bytes) return std::nullopt;
    return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  }
  return std::nullopt;
}

// The length of a bytes or str object without reading its text: a name of another length is no
// label variable, and its text (a secret's name, say) is never read.
std::optional<int64_t> object_length(const AddressSpace& memory, const Layout& layout, uint64_t object) {
  auto size = read_value<int64_t>(memory, object + static_cast<uint64_t>(layout.object.ob_size));
  if (!size || *size < 0) return std::nullopt;
  return *size;
}

// An int local of the first frame running `function` in a file ending with `file`.
std::optional<int64_t> int_local(const AddressSpace& memory, const Layout& layout, const ProcessStacks& stacks,
                                 std::string_view file, std::string_view function, std::string_view name) {
  VariableReader variables(memory, layout);
  ObjectReader objects(memory, layout);
  for (const PythonThread& thread : stacks.threads) {
    for (const PythonFrame& frame : thread.frames) {
      if (frame.function != function || !std::string_view(frame.file).ends_with(file)) continue;
      auto found = variables.lookup(frame, name, VariableReader::Want::kObjectOnly);
      if (!found || !*found || (*found)->scope != Scope::kLocal) return std::nullopt;
      auto type = objects.type_name((*found)->variable.object);
      if (!type || *type != "int") return std::nullopt;
      auto value = objects.read_uint64((*found)->variable.object);
      if (!value || *value > (uint64_t{1} << 31)) return std::nullopt;
      return static_cast<int64_t>(*value);
    }
  }
  return std::nullopt;
}

}  // namespace

JobIndexes read_job_indexes(const AddressSpace& memory, const ProcessStacks& stacks) {
  JobIndexes indexes;
  if (!stacks.layout) return indexes;
  indexes.spawn_index = int_local(memory, *stacks.layout, stacks, "torch/multiprocessing/spawn.py", "_wrap", "i");
  indexes.dataloader_worker_id =
      int_local(memory, *stacks.layout, stacks, "torch/utils/data/_utils/worker.py", "_worker_loop", "worker_id");
  // -1 (its default) means "from the environment": only a real size counts.
  indexes.group_world_size = int_local(memory, *stacks.layout, stacks, "torch/distributed/distributed_c10d.py",
                                       "init_process_group", "world_size");
  if (indexes.group_world_size && *indexes.group_world_size < 1) indexes.group_world_size.reset();
  indexes.spawn_nprocs =
      int_local(memory, *stacks.layout, stacks, "torch/multiprocessing/spawn.py", "start_processes", "nprocs");
  if (indexes.spawn_nprocs && *indexes.spawn_nprocs < 1) indexes.spawn_nprocs.reset();
  return indexes;
}

std::map<std::string, std::string> read_environment_now(const AddressSpace& memory, const ProcessStacks& stacks,
                                                        const std::function<bool(std::string_view)>& wanted) {
  std::map<std::string, std::string> found;
  if (!stacks.layout || stacks.threads.empty()) return found;
  const Layout& layout = *stacks.layout;
  auto data = environ_data(memory, layout, stacks.threads.front().interpreter);
  if (!data) return found;
  ObjectReader objects(memory, layout);
  ContainerReader containers(objects);
  auto items = containers.dict_items(*data, kMaxEnvironmentEntries);
  if (!items) return found;
  for (const auto& [key, value] : *items) {
    auto length = object_length(memory, layout, key);
    if (!length || *length == 0 || *length > kMaxLabelNameLength) continue;
    auto name = short_text(objects, key);
    if (!name || !wanted(*name)) continue;
    if (auto text = short_text(objects, value)) found[*name] = *text;
  }
  return found;
}

}  // namespace hangpy::cpython
