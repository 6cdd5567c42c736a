// Where asyncio keeps its tasks, and finding them there: asyncio.tasks' task sets (WeakSets or
// sets, and the current task of each loop) in every interpreter's sys.modules, and from 3.14 the
// per-thread and per-interpreter lists of the C module, with the offsets the _asyncio module
// states of itself where it does. The base of cpython/asyncio_tasks.cpp's reader, which reads
// each task found; internal to those two files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cpython/asyncio_tasks.h"
#include "cpython/container_reader.h"
#include "cpython/instance_attributes.h"
#include "cpython/layout.h"
#include "cpython/object_reader.h"

namespace hangpy::cpython {

template <typename T>
Expected<T> read_at(const AddressSpace& memory, uint64_t base, int32_t offset) {
  if (offset == kAbsent) return make_error(ErrorKind::kUnsupported, "no such field in this version");
  return read_value<T>(memory, base + static_cast<uint64_t>(offset));
}

class TaskFinder {
 protected:
  TaskFinder(const Target& target, const ProcessStacks& stacks);

  // Fills order_ (each task once, in the order found), running_, running_thread_, and result_'s
  // imported, offsets_source and warnings.
  void find();
  // asyncio.tasks' module dict in this interpreter's sys.modules (0: not imported).
  uint64_t tasks_module_dict(uint64_t interpreter);
  // The members of a set or of a WeakSet (its `data` set of weak references), dereferenced.
  std::vector<uint64_t> set_members(uint64_t holder, const std::string& what);
  // Whether the object's type is `name` or derives from it (through tp_base).
  bool derives_from(uint64_t object, std::string_view name);
  bool is_task(uint64_t object) { return derives_from(object, "_asyncio.Task"); }
  bool is_future(uint64_t object) { return derives_from(object, "_asyncio.Future"); }
  void warn(std::string text);

  const Target& target_;
  const AddressSpace& memory_;
  const Layout& layout_;
  AsyncioLayout a_;  // the table's, with the process's own debug offsets where it has them
  const ProcessStacks& stacks_;
  ObjectReader objects_;
  ContainerReader containers_;
  InstanceAttributes attributes_;
  AsyncioTasks result_;
  std::vector<uint64_t> order_;
  std::unordered_set<uint64_t> running_;
  std::unordered_map<uint64_t, uint64_t> running_thread_;

 private:
  void prefer_debug_offsets();
  void add_task(uint64_t task);
  void collect_from_module(uint64_t interpreter);
  bool asyncio_accelerator_present() const;
  void collect_from_thread_lists(const std::vector<uint64_t>& interpreters);

  std::unordered_set<uint64_t> seen_;
};

}  // namespace hangpy::cpython
