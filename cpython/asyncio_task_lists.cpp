#include "cpython/asyncio_task_lists.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace hangpy::cpython {
namespace {

constexpr size_t kMaxSetSlots = size_t{1} << 22;  // a set of 4 M slots holds ~2.5 M tasks
constexpr size_t kMaxListNodes = 1 << 22;
constexpr size_t kMaxTypeDepth = 32;  // tp_base links followed

}  // namespace

TaskFinder::TaskFinder(const Target& target, const ProcessStacks& stacks)
    : target_(target),
      memory_(target.memory()),
      layout_(*stacks.layout),
      a_(stacks.layout->asyncio),
      stacks_(stacks),
      objects_(memory_, layout_),
      containers_(objects_),
      attributes_(objects_) {}

void TaskFinder::find() {
  result_.offsets_source = "compiled table";
  prefer_debug_offsets();
  std::vector<uint64_t> interpreters;
  for (const PythonThread& thread : stacks_.threads) {
    if (std::find(interpreters.begin(), interpreters.end(), thread.interpreter) == interpreters.end())
      interpreters.push_back(thread.interpreter);
  }
  for (uint64_t interpreter : interpreters) collect_from_module(interpreter);
  collect_from_thread_lists(interpreters);
}

void TaskFinder::warn(std::string text) {
  if (result_.warnings.size() < 16) result_.warnings.push_back(std::move(text));
}

// 3.14 on, the _asyncio module states the offsets of its task lists in a section of its own
// (_Py_AsyncioModuleDebugOffsets in .AsyncioDebug: 13 uint64 of task, interpreter and thread
// state fields, each struct's size first). They win over the table when they make sense.
void TaskFinder::prefer_debug_offsets() {
  if (a_.task_node == kAbsent) return;
  auto section = target_.find_section(".AsyncioDebug");
  if (!section) return;
  std::array<uint64_t, 13> words{};
  if (!memory_.read(*section, std::as_writable_bytes(std::span(words)))) return;
  const uint64_t task_size = words[0], task_name = words[1], task_coro = words[5],
                 task_node = words[6], interpreter_size = words[7],
                 interpreter_head = words[8], thread_size = words[9],
                 running_task = words[11], thread_head = words[12];
  auto inside = [](uint64_t offset, uint64_t size, uint64_t width) {
    return size < (1u << 24) && offset + width <= size;
  };
  if (!inside(task_name, task_size, 8) || !inside(task_coro, task_size, 8) ||
      !inside(task_node, task_size, 16) || !inside(interpreter_head, interpreter_size, 16) ||
      !inside(running_task, thread_size, 8) || !inside(thread_head, thread_size, 16)) {
    warn(fmt::format("ignoring the _asyncio module's debug offsets at 0x{:x}: they do not fit", *section));
    return;
  }
  a_.task_name = static_cast<int32_t>(task_name);
  a_.task_coro = static_cast<int32_t>(task_coro);
  a_.task_node = static_cast<int32_t>(task_node);
  a_.interpreter_tasks_head = static_cast<int32_t>(interpreter_head);
  a_.thread_running_task = static_cast<int32_t>(running_task);
  a_.thread_tasks_head = static_cast<int32_t>(thread_head);
  result_.offsets_source = "section .AsyncioDebug";
}

void TaskFinder::add_task(uint64_t task) {
  if (task != 0 && is_task(task) && seen_.insert(task).second) order_.push_back(task);
}

// asyncio.tasks' module dict in this interpreter's sys.modules (0: not imported).
uint64_t TaskFinder::tasks_module_dict(uint64_t interpreter) {
  if (layout_.interpreter.sysdict == kAbsent) return 0;
  auto sysdict = read_at<uint64_t>(memory_, interpreter, layout_.interpreter.sysdict);
  if (!sysdict || *sysdict == 0) return 0;
  auto modules = containers_.dict_get(*sysdict, "modules");
  if (!modules || *modules == 0) return 0;
  auto module = containers_.dict_get(*modules, "asyncio.tasks");
  if (!module || *module == 0) return 0;
  auto dict = read_at<uint64_t>(memory_, *module, layout_.variables.module_dict);
  return dict ? *dict : 0;
}

// Whether the process has asyncio's C module, which asyncio.tasks imports whenever it is there:
// as a mapped extension file (_asyncio.cpython-*.so) or built into the interpreter (a name in
// PyImport_Inittab, as in static builds). Without it asyncio was not imported, and looking
// asyncio.tasks up in sys.modules, which reads every module's name (thousands in a PyTorch
// process: 16 of the 35 MiB peak RSS on its core), is skipped. Unsure (no table found): look.
bool TaskFinder::asyncio_accelerator_present() const {
  for (const MappedModule& module : target_.modules()) {
    const std::string_view path = module.path;
    const std::string_view base = path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
    if (base.starts_with("_asyncio.") || base == "_asyncio") return true;
  }
  auto table_pointer = target_.find_symbol("PyImport_Inittab");
  if (!table_pointer) return true;
  auto table = read_pointer(memory_, *table_pointer);
  if (!table || *table == 0) return true;
  constexpr size_t kMaxBuiltinModules = 1024;  // struct _inittab {name, initfunc}, NULL-ended
  for (size_t i = 0; i < kMaxBuiltinModules; ++i) {
    auto name_address = read_pointer(memory_, *table + 16 * i);
    if (!name_address) return true;
    if (*name_address == 0) return false;
    auto name = read_c_string(memory_, *name_address, 64);
    if (!name) return true;
    if (*name == "_asyncio") return true;
  }
  return true;
}

void TaskFinder::collect_from_module(uint64_t interpreter) {
  if (!asyncio_accelerator_present()) return;
  const uint64_t dict = tasks_module_dict(interpreter);
  if (dict == 0) return;
  result_.imported = true;
  for (std::string_view name : a_.task_sets) {
    if (name.empty()) continue;
    auto holder = containers_.dict_get(dict, name);
    if (!holder || *holder == 0) continue;
    for (uint64_t item : set_members(*holder, std::string(name))) add_task(item);
  }
  if (!a_.current_tasks.empty()) {
    auto current = containers_.dict_get(dict, a_.current_tasks);
    if (current && *current != 0) {
      if (auto items = containers_.dict_items(*current, 4096)) {
        for (const auto& [loop, task] : *items) {
          running_.insert(task);
          add_task(task);
        }
      }
    }
  }
}

// The members of a set or of a WeakSet (its `data` set of weak references), dereferenced.
std::vector<uint64_t> TaskFinder::set_members(uint64_t holder, const std::string& what) {
  std::vector<uint64_t> members;
  uint64_t set = holder;
  auto type = objects_.type_name(holder);
  if (!type) return members;
  if (*type == "WeakSet") {
    auto data = attributes_.get(holder, "data");
    if (!data || *data == 0) {
      warn(fmt::format("asyncio.tasks.{} (a WeakSet) has no readable `data`", what));
      return members;
    }
    set = *data;
  }
  auto mask = read_at<int64_t>(memory_, set, a_.set_mask);
  auto table = read_at<uint64_t>(memory_, set, a_.set_table);
  if (!mask || !table || *mask < 0 || static_cast<uint64_t>(*mask) >= kMaxSetSlots) {
    warn(fmt::format("asyncio.tasks.{}: the set at 0x{:x} cannot be read", what, set));
    return members;
  }
  const size_t slots = static_cast<size_t>(*mask) + 1;
  std::vector<uint64_t> entries(slots * 2);
  if (!memory_.read(*table, std::as_writable_bytes(std::span(entries)))) {
    warn(fmt::format("asyncio.tasks.{}: the set's table at 0x{:x} is not readable", what, *table));
    return members;
  }
  for (size_t i = 0; i < slots; ++i) {
    const uint64_t key = entries[2 * i];
    if (key == 0) continue;
    auto key_type = objects_.type_name(key);
    if (!key_type) continue;  // the dummy entry of a deleted key, or garbage
    if (key_type->find("weakref") != std::string::npos || *key_type == "KeyedRef") {
      auto referent = read_at<uint64_t>(memory_, key, a_.weakref_object);
      if (referent && *referent != 0) members.push_back(*referent);
    } else {
      members.push_back(key);
    }
  }
  return members;
}

// 3.14 on: each thread's circular list of native tasks, and the interpreter's for tasks whose
// thread has ended.
void TaskFinder::collect_from_thread_lists(const std::vector<uint64_t>& interpreters) {
  if (a_.task_node == kAbsent) return;
  // One direction of the circular list (llist_node {next, prev}: `link` 0 follows next, 8
  // prev); false where it stopped at something that is no task (a corrupt node).
  auto walk_one_way = [this](uint64_t head, uint64_t link) {
    uint64_t node = 0;
    if (auto first = read_value<uint64_t>(memory_, head + link)) node = *first;
    for (size_t count = 0; node != 0 && node != head; ++count) {
      if (count >= kMaxListNodes) {
        warn(fmt::format("the task list at 0x{:x} does not end", head));
        return false;
      }
      const uint64_t task = node - static_cast<uint64_t>(a_.task_node);
      if (!is_task(task)) {
        warn(fmt::format("the task list at 0x{:x} holds something that is no task (0x{:x})", head, task));
        return false;
      }
      result_.imported = true;
      add_task(task);
      auto next = read_value<uint64_t>(memory_, node + link);
      if (!next) return false;
      node = *next;
    }
    return true;
  };
  // A list broken at one task (its links overwritten) still gives the tasks on both sides of it:
  // those after the break are reached from the head's other end.
  auto walk = [&walk_one_way](uint64_t head) {
    if (!walk_one_way(head, 0)) walk_one_way(head, 8);
  };
  for (const PythonThread& thread : stacks_.threads) {
    if (a_.thread_running_task != kAbsent) {
      auto running = read_at<uint64_t>(memory_, thread.thread_state, a_.thread_running_task);
      if (running && *running != 0 && is_task(*running)) {
        running_.insert(*running);
        running_thread_[*running] = thread.thread_id;
        add_task(*running);
      }
    }
    if (a_.thread_tasks_head != kAbsent)
      walk(thread.thread_state + static_cast<uint64_t>(a_.thread_tasks_head));
  }
  if (a_.interpreter_tasks_head != kAbsent) {
    for (uint64_t interpreter : interpreters)
      walk(interpreter + static_cast<uint64_t>(a_.interpreter_tasks_head));
  }
}

// Whether the object's type is `name` or derives from it (through tp_base).
bool TaskFinder::derives_from(uint64_t object, std::string_view name) {
  auto type = objects_.type_of(object);
  if (!type) return false;
  uint64_t current = *type;
  for (size_t depth = 0; current != 0 && depth < kMaxTypeDepth; ++depth) {
    auto type_name = objects_.name_of_type(current);
    if (type_name && *type_name == name) return true;
    auto base = read_at<uint64_t>(memory_, current, layout_.instances.type_base);
    if (!base) return false;
    current = *base;
  }
  return false;
}

}  // namespace hangpy::cpython
