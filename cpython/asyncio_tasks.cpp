#include "cpython/asyncio_tasks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "cpython/container_reader.h"
#include "cpython/frame_variables.h"
#include "cpython/instance_attributes.h"
#include "cpython/object_reader.h"
#include "cpython/stack_walker.h"

namespace hangpy::cpython {
namespace {

constexpr size_t kMaxSetSlots = size_t{1} << 22;  // a set of 4 M slots holds ~2.5 M tasks
constexpr size_t kMaxChainDepth = 512;            // awaits nested deeper are cut
constexpr size_t kMaxListNodes = 1 << 22;
constexpr size_t kMaxCallbacksRead = 16;  // enough to recognise who added them
constexpr size_t kMaxStackSlotsScanned = 512;
constexpr size_t kMaxTypeDepth = 32;  // tp_base links followed
// Await rings longer than this are not looked for (the search recurses along the ring).
constexpr size_t kMaxCycleLength = 256;
constexpr size_t kMaxCyclesReported = 64;

template <typename T>
Expected<T> read_at(const AddressSpace& memory, uint64_t base, int32_t offset) {
  if (offset == kAbsent) return make_error(ErrorKind::kUnsupported, "no such field in this version");
  return read_value<T>(memory, base + static_cast<uint64_t>(offset));
}

class TaskReader {
 public:
  TaskReader(const Target& target, const ProcessStacks& stacks, const AsyncioOptions& options)
      : target_(target),
        memory_(target.memory()),
        layout_(*stacks.layout),
        a_(stacks.layout->asyncio),
        stacks_(stacks),
        options_(options),
        objects_(memory_, layout_),
        containers_(objects_),
        attributes_(objects_),
        variables_(memory_, layout_),
        walker_(memory_, layout_) {}

  AsyncioTasks read() {
    if (a_.task_coro == kAbsent) {
      for (const PythonThread& thread : stacks_.threads) {
        if (tasks_module_dict(thread.interpreter) == 0) continue;
        result_.imported = true;
        result_.unsupported = fmt::format("hangpy does not read asyncio's tasks of Python {}{}",
                                          layout_.name, layout_.free_threaded ? " yet" : "");
        break;
      }
      return result_;
    }
    result_.offsets_source = "compiled table";
    prefer_debug_offsets();
    std::vector<uint64_t> interpreters;
    for (const PythonThread& thread : stacks_.threads) {
      if (std::find(interpreters.begin(), interpreters.end(), thread.interpreter) == interpreters.end())
        interpreters.push_back(thread.interpreter);
    }
    for (uint64_t interpreter : interpreters) collect_from_module(interpreter);
    collect_from_thread_lists(interpreters);
    if (!result_.imported) return result_;
    result_.total = order_.size();
    for (uint64_t task : order_) {
      if (result_.tasks.size() >= options_.max_tasks) break;
      result_.tasks.push_back(read_task(task));
    }
    link_awaited_by();
    // Set and list order says nothing: by name, so that two runs print alike.
    std::stable_sort(result_.tasks.begin(), result_.tasks.end(),
                     [](const AsyncTask& a, const AsyncTask& b) { return a.name < b.name; });
    find_cycles();
    return std::move(result_);
  }

 private:
  // 3.14 on, the _asyncio module states the offsets of its task lists in a section of its own
  // (_Py_AsyncioModuleDebugOffsets in .AsyncioDebug: 13 uint64 of task, interpreter and thread
  // state fields, each struct's size first). They win over the table when they make sense.
  void prefer_debug_offsets() {
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

  // --- finding the tasks -------------------------------------------------------------------

  void add_task(uint64_t task) {
    if (task != 0 && is_task(task) && seen_.insert(task).second) order_.push_back(task);
  }

  // asyncio.tasks' module dict in this interpreter's sys.modules (0: not imported).
  uint64_t tasks_module_dict(uint64_t interpreter) {
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

  void collect_from_module(uint64_t interpreter) {
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
  std::vector<uint64_t> set_members(uint64_t holder, const std::string& what) {
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
  void collect_from_thread_lists(const std::vector<uint64_t>& interpreters) {
    if (a_.task_node == kAbsent) return;
    auto walk = [this](uint64_t head) {
      uint64_t node = 0;
      if (auto first = read_value<uint64_t>(memory_, head)) node = *first;
      for (size_t count = 0; node != 0 && node != head; ++count) {
        if (count >= kMaxListNodes) {
          warn(fmt::format("the task list at 0x{:x} does not end", head));
          return;
        }
        const uint64_t task = node - static_cast<uint64_t>(a_.task_node);
        if (!is_task(task)) {
          warn(fmt::format("the task list at 0x{:x} holds something that is no task (0x{:x})", head, task));
          return;
        }
        result_.imported = true;
        add_task(task);
        auto next = read_value<uint64_t>(memory_, node);
        if (!next) return;
        node = *next;
      }
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

  // --- object kinds ------------------------------------------------------------------------

  // Whether the object's type is `name` or derives from it (through tp_base).
  bool derives_from(uint64_t object, std::string_view name) {
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
  bool is_task(uint64_t object) { return derives_from(object, "_asyncio.Task"); }
  bool is_future(uint64_t object) { return derives_from(object, "_asyncio.Future"); }

  // --- one task ----------------------------------------------------------------------------

  AsyncTask read_task(uint64_t address) {
    AsyncTask task;
    task.address = address;
    task.name = task_name(address);
    auto state = read_at<int32_t>(memory_, address, a_.future_state);
    if (!state) {
      task.error = state.error();
    } else if (*state == 1) {
      task.state = TaskState::kCancelled;
    } else if (*state == 2) {
      task.state = TaskState::kDone;
    } else if (running_.contains(address)) {
      task.state = TaskState::kRunning;
    }
    if (auto found = running_thread_.find(address); found != running_thread_.end())
      task.thread_id = found->second;
    if (task.state == TaskState::kDone || task.state == TaskState::kCancelled) {
      if (task.name.empty()) task.name = fmt::format("Task at 0x{:x}", address);
      return task;
    }

    uint64_t awaited = 0;  // the last object of the await chain
    if (auto coro = read_at<uint64_t>(memory_, address, a_.task_coro); coro && *coro != 0) {
      awaited = follow_chain(*coro, task);
    }
    if (task.name.empty()) {
      // Before 3.8 tasks have no names: the outermost coroutine's says what it is.
      task.name = task.coroutine_stack.empty()
                      ? fmt::format("Task at 0x{:x}", address)
                      : fmt::format("Task {} at 0x{:x}", task.coroutine_stack.back().function, address);
    }
    if (task.state == TaskState::kRunning && !task.thread_id) task.thread_id = thread_running(task);
    if (task.state == TaskState::kRunning) return task;
    auto waiter = read_at<uint64_t>(memory_, address, a_.task_fut_waiter);
    if (waiter && *waiter != 0) awaited = *waiter;
    if (awaited != 0) classify(task, awaited);
    return task;
  }

  std::string task_name(uint64_t task) {
    auto object = read_at<uint64_t>(memory_, task, a_.task_name);
    if (object && *object != 0) {
      auto type = objects_.type_name(*object);
      if (type && *type == "str") {
        if (auto text = objects_.read_string(*object)) return *text;
      } else if (type && *type == "int") {
        // 3.13 on keep the counter until the name is asked for (Task-N is made then).
        if (auto number = objects_.read_uint64(*object)) return fmt::format("Task-{}", *number);
      }
    }
    return a_.task_name == kAbsent ? std::string() : fmt::format("Task at 0x{:x}", task);
  }

  // The frame struct of a coroutine or generator, 0 when it has none (finished).
  uint64_t frame_of(uint64_t coroutine) {
    if (a_.coroutine_frame != kAbsent) return coroutine + static_cast<uint64_t>(a_.coroutine_frame);
    auto pointer = read_at<uint64_t>(memory_, coroutine, a_.coroutine_frame_pointer);
    return pointer ? *pointer : 0;
  }

  // Whether the embedded frame is suspended (3.11 on); frame objects say it by their stack top.
  bool suspended(uint64_t coroutine) {
    if (a_.coroutine_frame_state == kAbsent) return true;
    auto state = read_at<int8_t>(memory_, coroutine, a_.coroutine_frame_state);
    return state && *state >= a_.suspended_state_low && *state <= a_.suspended_state_high;
  }

  // The address of the frame's value-stack slots [first, end): locals first (the stack follows
  // them), end one past the top. nullopt when the frame records no top (not suspended).
  std::optional<std::pair<uint64_t, uint64_t>> stack_slots(uint64_t frame) {
    const uint64_t base = frame + static_cast<uint64_t>(layout_.frame.localsplus);
    switch (a_.stack_top_model) {
      case StackTopModel::kNone:
        return std::nullopt;
      case StackTopModel::kPointerPastTop: {
        auto top = read_at<uint64_t>(memory_, frame, a_.stack_top);
        if (!top || *top <= base || *top - base > kMaxStackSlotsScanned * 8 || *top % 8) return std::nullopt;
        return std::pair{base, *top};
      }
      case StackTopModel::kDepthFromValueStack: {
        auto values = read_at<uint64_t>(memory_, frame, a_.value_stack);
        auto depth = read_at<int32_t>(memory_, frame, a_.stack_top);
        if (!values || !depth || *depth <= 0 || static_cast<size_t>(*depth) > kMaxStackSlotsScanned)
          return std::nullopt;
        return std::pair{base, *values + 8 * static_cast<uint64_t>(*depth)};
      }
      case StackTopModel::kIndexFromLocalsplus: {
        auto index = read_at<int32_t>(memory_, frame, a_.stack_top);
        if (!index || *index <= 0 || static_cast<size_t>(*index) > kMaxStackSlotsScanned) return std::nullopt;
        return std::pair{base, base + 8 * static_cast<uint64_t>(*index)};
      }
    }
    return std::nullopt;
  }

  uint64_t untag(uint64_t slot) const { return slot & ~layout_.frame.stack_ref_tag_mask; }

  // Coroutine -> the coroutine or future it awaits -> ... Frames go to task.coroutine_stack
  // (innermost first); returns what the innermost one awaits (0: nothing readable).
  uint64_t follow_chain(uint64_t coroutine, AsyncTask& task) {
    std::vector<PythonFrame> outermost_first;
    std::unordered_set<uint64_t> visited;
    uint64_t object = coroutine;
    uint64_t awaited = 0;
    for (size_t depth = 0; object != 0; ++depth) {
      if (depth >= kMaxChainDepth || !visited.insert(object).second) {
        task.error = Error{ErrorKind::kCorrupt, "the await chain loops or is too deep", object};
        break;
      }
      auto type = objects_.type_name(object);
      if (!type) break;
      if (*type == "coroutine" || *type == "generator") {
        const uint64_t frame = frame_of(object);
        if (frame == 0) break;
        auto decoded = walker_.frame_at(frame);
        if (!decoded) {
          task.error = decoded.error();
          break;
        }
        if (a_.coroutine_qualname != kAbsent) {
          // Code objects before 3.11 know only the bare name; the coroutine its qualified one.
          auto qualname = read_at<uint64_t>(memory_, object, a_.coroutine_qualname);
          if (qualname && *qualname != 0)
            if (auto text = objects_.read_string(*qualname)) decoded->qualname = *text;
        }
        outermost_first.push_back(std::move(*decoded));
        if (!suspended(object)) break;
        auto slots = stack_slots(frame);
        if (!slots) break;
        // The awaitable is the top slot; 3.15 keeps a NULL stack ref above it while suspended
        // in a SEND (the value sent in), which is skipped.
        auto top = read_value<uint64_t>(memory_, slots->second - 8);
        if (!top) break;
        object = untag(*top);
        if (object == 0 && slots->second - 16 >= slots->first) {
          auto below = read_value<uint64_t>(memory_, slots->second - 16);
          if (!below) break;
          object = untag(*below);
        }
        continue;
      }
      if (*type == "_asyncio.FutureIter" || *type == "FutureIter") {
        auto future = read_at<uint64_t>(memory_, object, a_.future_iter_future);
        if (future && *future != 0) awaited = *future;
        break;
      }
      if (is_future(object)) awaited = object;
      break;
    }
    task.coroutine_stack.assign(outermost_first.rbegin(), outermost_first.rend());
    return awaited;
  }

  // The thread whose frame chain holds the task's outermost coroutine frame.
  std::optional<uint64_t> thread_running(const AsyncTask& task) {
    if (task.coroutine_stack.empty()) return std::nullopt;
    const uint64_t frame = task.coroutine_stack.back().address;
    for (const PythonThread& thread : stacks_.threads)
      for (const PythonFrame& each : thread.frames)
        if (each.address == frame) return thread.thread_id;
    return std::nullopt;
  }

  // The first `cap` callbacks of a future: callback0, then the (callback, context) tuples of
  // the list. A future thousands of tasks wait for has thousands: callers need only the first.
  std::vector<uint64_t> callbacks(uint64_t future, size_t cap = kMaxCallbacksRead) {
    std::vector<uint64_t> found;
    if (auto first = read_at<uint64_t>(memory_, future, a_.future_callback0); first && *first != 0)
      found.push_back(*first);
    auto list = read_at<uint64_t>(memory_, future, a_.future_callbacks);
    if (list && *list != 0 && found.size() < cap) {
      if (auto items = containers_.list_items(*list, cap - found.size())) {
        for (uint64_t item : *items) {
          auto pair = containers_.tuple_items(item, 2);
          if (pair && !pair->empty()) found.push_back(pair->front());
        }
      }
    }
    return found;
  }

  // How many callbacks a future has: callback0 and the list's length (ob_size), not read one by one.
  size_t callback_count(uint64_t future) {
    if (auto cached = callback_counts_.find(future); cached != callback_counts_.end()) return cached->second;
    size_t count = 0;
    if (auto first = read_at<uint64_t>(memory_, future, a_.future_callback0); first && *first != 0) ++count;
    auto list = read_at<uint64_t>(memory_, future, a_.future_callbacks);
    if (list && *list != 0) {
      auto size = read_at<int64_t>(memory_, *list, layout_.object.ob_size);
      if (size && *size > 0 && static_cast<uint64_t>(*size) < (uint64_t{1} << 40)) count += static_cast<size_t>(*size);
    }
    callback_counts_[future] = count;
    return count;
  }

  std::string type_of(uint64_t object) {
    auto type = objects_.type_name(object);
    return type ? *type : std::string("?");
  }

  // `self` of the innermost coroutine frame, when it has one.
  uint64_t innermost_self(const AsyncTask& task) {
    if (task.coroutine_stack.empty()) return 0;
    auto found = variables_.lookup(task.coroutine_stack.front(), "self",
                                   VariableReader::Want::kObjectOnly);
    if (!found || !*found || (*found)->scope != Scope::kLocal) return 0;
    return (*found)->variable.object;
  }

  void classify(AsyncTask& task, uint64_t awaited) {
    task.awaited_object = awaited;
    task.awaited_type = type_of(awaited);
    if (is_task(awaited)) {
      task.awaits = AwaitKind::kTask;
      task.awaited_tasks.push_back(awaited);
      task.detail = task_name(awaited);
      if (task.detail.empty()) task.detail = fmt::format("Task at 0x{:x}", awaited);
      return;
    }
    if (task.awaited_type == "_GatheringFuture") {
      task.awaits = AwaitKind::kGather;
      if (auto children = attributes_.get(awaited, "_children"); children && *children != 0) {
        if (auto items = containers_.list_items(*children, 4096))
          for (uint64_t child : *items)
            if (is_task(child)) task.awaited_tasks.push_back(child);
      }
      task.detail = fmt::format("gather of {} tasks", task.awaited_tasks.size());
      return;
    }
    const size_t waiting = callback_count(awaited);
    const std::string pending = fmt::format("Future pending, {} callback{}", waiting, waiting == 1 ? "" : "s");
    if (!task.coroutine_stack.empty()) {
      const PythonFrame& inner = task.coroutine_stack.front();
      auto in = [&inner](std::string_view file) { return inner.file.ends_with(file); };
      if (in("asyncio/tasks.py") && inner.function == "sleep") {
        classify_sleep(task, inner);
        return;
      }
      if (in("asyncio/locks.py")) {
        const uint64_t self = innermost_self(task);
        const std::string kind = self ? type_of(self) : "";
        if (kind == "Lock") {
          task.awaits = AwaitKind::kLock;
          task.detail = "asyncio.Lock";
          note_lock_wait(task, self);
        } else if (kind == "Event") {
          task.awaits = AwaitKind::kEvent;
          task.detail = "asyncio.Event";
        } else if (kind == "Condition") {
          task.awaits = AwaitKind::kCondition;
          task.detail = "asyncio.Condition";
        } else if (kind == "Semaphore" || kind == "BoundedSemaphore") {
          task.awaits = AwaitKind::kSemaphore;
          task.detail = "asyncio." + kind;
        } else {
          task.awaits = AwaitKind::kOther;
          task.detail = fmt::format("{} in asyncio/locks.py {}", pending, inner.function);
        }
        return;
      }
      if (in("asyncio/queues.py")) {
        task.awaits = AwaitKind::kQueue;
        const uint64_t self = innermost_self(task);
        task.detail = fmt::format("asyncio.{}.{}", self ? type_of(self) : "Queue", inner.function);
        return;
      }
      if (in("asyncio/taskgroups.py")) {
        task.awaits = AwaitKind::kTaskGroup;
        if (const uint64_t group = innermost_self(task)) {
          if (auto members = attributes_.get(group, "_tasks"); members && *members != 0)
            for (uint64_t child : set_members(*members, "TaskGroup._tasks"))
              if (is_task(child)) task.awaited_tasks.push_back(child);
        }
        task.detail = fmt::format("TaskGroup of {} tasks", task.awaited_tasks.size());
        return;
      }
    }
    if (classify_executor(task, awaited)) return;
    task.awaits = task.awaited_type == "_asyncio.Future" ? AwaitKind::kFuture : AwaitKind::kOther;
    task.detail = task.awaits == AwaitKind::kFuture
                      ? pending
                      : fmt::format("{} ({})", pending, task.awaited_type);
  }

  void classify_sleep(AsyncTask& task, const PythonFrame& sleep) {
    task.awaits = AwaitKind::kSleep;
    task.detail = "asyncio.sleep";
    auto delay = variables_.lookup(sleep, "delay");
    if (delay && *delay) task.detail = fmt::format("asyncio.sleep({})", (*delay)->variable.repr);
    if (!options_.monotonic_now) return;
    // The timer handle the sleep scheduled knows when it is due, in loop.time() (monotonic).
    auto handle = variables_.lookup(sleep, "h", VariableReader::Want::kObjectOnly);
    if (!handle || !*handle) return;
    // TimerHandle keeps _when in a __slots__ member, not in a __dict__.
    auto when = attributes_.slot((*handle)->variable.object, "_when");
    if (!when || *when == 0 || type_of(*when) != "float") return;
    auto due = read_at<double>(memory_, *when, layout_.variables.float_value);
    if (!due || !std::isfinite(*due)) return;
    task.detail += fmt::format(", due in {:.0f} s", std::max(0.0, *due - *options_.monotonic_now));
  }

  // asyncio.Lock records no owner: its holder is found once every task is read (link_awaited_by:
  // the task whose coroutine frames keep the lock on their value stack).
  void note_lock_wait(const AsyncTask& waiter, uint64_t lock) {
    lock_waits_.emplace_back(waiter.address, lock);
  }

  // How many fast slots (locals, cells, free variables) come before the value stack.
  std::optional<size_t> fast_slot_count(uint64_t code) {
    const VariablesLayout& v = layout_.variables;
    size_t count = 0;
    for (int32_t offset : {v.code_local_names, v.code_cell_names, v.code_free_names}) {
      if (offset == kAbsent) continue;
      auto tuple = read_at<uint64_t>(memory_, code, offset);
      if (!tuple) return std::nullopt;
      auto items = containers_.tuple_items(*tuple, kMaxStackSlotsScanned);
      if (!items) return std::nullopt;
      count += items->size();
    }
    return count;
  }

  // Which of `wanted`'s keys the frame holds on its value stack (not in a local: the task that
  // made a lock holds it there without holding the lock), itself or as the self of a bound
  // method (`async with lock:` keeps lock.__aexit__ there until the block ends; 3.14 on keep
  // the function and the lock in two slots).
  template <typename Map>
  std::vector<uint64_t> objects_held(const PythonFrame& frame, const Map& wanted) {
    std::vector<uint64_t> held;
    auto slots = stack_slots(frame.address);
    auto locals = fast_slot_count(frame.code_address);
    if (!slots || !locals) return held;
    const uint64_t first = slots->first + 8 * *locals;
    if (first >= slots->second) return held;
    const size_t count = std::min<size_t>((slots->second - first) / 8, kMaxStackSlotsScanned);
    std::vector<uint64_t> values(count);
    if (!memory_.read(first, std::as_writable_bytes(std::span(values)))) return held;
    for (uint64_t raw : values) {
      uint64_t value = untag(raw);
      if (value == 0) continue;
      if (!wanted.contains(value)) {
        auto type = objects_.type_name(value);
        if (!type || *type != "method") continue;
        auto self = read_at<uint64_t>(memory_, value, a_.method_self);
        if (!self || !wanted.contains(*self)) continue;
        value = *self;
      }
      if (std::find(held.begin(), held.end(), value) == held.end()) held.push_back(value);
    }
    return held;
  }

  // run_in_executor: the future is chained to a concurrent.futures.Future (futures._chain_future
  // adds the closure `_call_check_cancel` as a callback, whose cells hold that future), which a
  // worker thread's `_WorkItem.run` frame holds as `self.future`.
  bool classify_executor(AsyncTask& task, uint64_t awaited) {
    std::vector<uint64_t> cell_values;
    for (uint64_t callback : callbacks(awaited)) {
      if (type_of(callback) != "function") continue;
      auto closure = read_at<uint64_t>(memory_, callback, a_.function_closure);
      if (!closure || *closure == 0) continue;
      auto cells = containers_.tuple_items(*closure, 16);
      if (!cells) continue;
      for (uint64_t cell : *cells) {
        auto value = read_at<uint64_t>(memory_, cell, layout_.variables.cell_reference);
        if (value && *value != 0 && type_of(*value) == "Future") cell_values.push_back(*value);
      }
    }
    if (cell_values.empty()) return false;
    task.awaits = AwaitKind::kExecutor;
    task.detail = "run_in_executor";
    for (const PythonThread& thread : stacks_.threads) {
      for (const PythonFrame& frame : thread.frames) {
        if (frame.function != "run" || !frame.file.ends_with("concurrent/futures/thread.py")) continue;
        auto self = variables_.lookup(frame, "self", VariableReader::Want::kObjectOnly);
        if (!self || !*self) continue;
        auto future = attributes_.get((*self)->variable.object, "future");
        if (future && std::find(cell_values.begin(), cell_values.end(), *future) != cell_values.end()) {
          task.executor_thread = thread.thread_id;
          task.detail = thread.name ? fmt::format("run_in_executor, in thread {} \"{}\"", thread.thread_id, *thread.name)
                                    : fmt::format("run_in_executor, in thread {}", thread.thread_id);
        }
      }
    }
    return true;
  }

  // --- across tasks ------------------------------------------------------------------------

  void link_awaited_by() {
    std::unordered_map<uint64_t, AsyncTask*> by_address;
    for (AsyncTask& task : result_.tasks) by_address[task.address] = &task;
    // Locks: the holder is a pending task that does not wait for the same lock and holds it in
    // a frame. One pass over every task's frames for all the locks waited for.
    std::unordered_map<uint64_t, std::vector<uint64_t>> waiters_of;  // lock -> waiting tasks
    for (const auto& [waiter, lock] : lock_waits_) waiters_of[lock].push_back(waiter);
    std::unordered_map<uint64_t, std::vector<uint64_t>> holders_of;
    if (!waiters_of.empty()) {
      for (const AsyncTask& other : result_.tasks) {
        for (const PythonFrame& frame : other.coroutine_stack) {
          for (uint64_t lock : objects_held(frame, waiters_of)) {
            const auto& waiting = waiters_of[lock];
            auto& holders = holders_of[lock];
            if (std::find(waiting.begin(), waiting.end(), other.address) == waiting.end() &&
                std::find(holders.begin(), holders.end(), other.address) == holders.end())
              holders.push_back(other.address);
          }
        }
      }
    }
    for (const auto& [waiter_address, lock] : lock_waits_) {
      AsyncTask* waiter = by_address[waiter_address];
      for (uint64_t holder : holders_of[lock]) {
        waiter->awaited_tasks.push_back(holder);
        waiter->detail = fmt::format("asyncio.Lock held by {}", by_address[holder]->name);
      }
    }
    auto add_edge = [&](uint64_t child, uint64_t parent) {
      auto found = by_address.find(child);
      if (found == by_address.end()) return;
      auto& list = found->second->awaited_by;
      if (std::find(list.begin(), list.end(), parent) == list.end()) list.push_back(parent);
    };
    // An awaited task is named as it is listed (before 3.8 names come from its coroutine).
    for (AsyncTask& task : result_.tasks) {
      if (task.awaits != AwaitKind::kTask || task.awaited_tasks.empty()) continue;
      if (auto found = by_address.find(task.awaited_tasks.front()); found != by_address.end())
        task.detail = found->second->name;
    }
    for (const AsyncTask& task : result_.tasks) {
      if (task.awaits == AwaitKind::kLock) continue;  // waiting for a holder is no await of it
      for (uint64_t child : task.awaited_tasks) add_edge(child, task.address);
    }
    // TaskGroup children are awaited by the group's parent task as soon as they exist (the
    // group's _on_task_done is among each child's callbacks).
    for (AsyncTask& task : result_.tasks) {
      for (uint64_t callback : callbacks(task.address)) {
        if (type_of(callback) != "method") continue;
        auto self = read_at<uint64_t>(memory_, callback, a_.method_self);
        if (!self || *self == 0 || type_of(*self) != "TaskGroup") continue;
        auto parent = attributes_.get(*self, "_parent_task");
        if (parent && *parent != 0 && *parent != task.address &&
            std::find(task.awaited_by.begin(), task.awaited_by.end(), *parent) == task.awaited_by.end())
          task.awaited_by.push_back(*parent);
      }
    }
  }

  // Rings in "waits for" (awaited tasks, gather children, lock holders), each reported once,
  // starting from its lowest address.
  void find_cycles() {
    std::unordered_map<uint64_t, const AsyncTask*> by_address;
    for (const AsyncTask& task : result_.tasks) by_address[task.address] = &task;
    std::set<std::vector<uint64_t>> rings;
    for (const AsyncTask& start : result_.tasks) {
      // Depth-first from each task, along waits-for edges, bounded by the task count.
      std::vector<uint64_t> path;
      std::unordered_set<uint64_t> on_path;
      std::unordered_set<uint64_t> explored;  // each task entered once per start
      std::function<void(uint64_t)> visit = [&](uint64_t address) {
        if (path.size() >= kMaxCycleLength || rings.size() >= kMaxCyclesReported) return;
        auto found = by_address.find(address);
        if (found == by_address.end() || !explored.insert(address).second) return;
        path.push_back(address);
        on_path.insert(address);
        for (uint64_t next : found->second->awaited_tasks) {
          if (next == start.address) {
            std::vector<uint64_t> ring = path;
            std::rotate(ring.begin(), std::min_element(ring.begin(), ring.end()), ring.end());
            rings.insert(ring);
          } else if (!on_path.contains(next) && next > start.address) {
            visit(next);
          }
        }
        on_path.erase(address);
        path.pop_back();
      };
      visit(start.address);
    }
    result_.cycles.assign(rings.begin(), rings.end());
  }

  void warn(std::string text) {
    if (result_.warnings.size() < 16) result_.warnings.push_back(std::move(text));
  }

  const Target& target_;
  const AddressSpace& memory_;
  const Layout& layout_;
  AsyncioLayout a_;  // the table's, with the process's own debug offsets where it has them
  const ProcessStacks& stacks_;
  const AsyncioOptions& options_;
  ObjectReader objects_;
  ContainerReader containers_;
  InstanceAttributes attributes_;
  VariableReader variables_;
  StackWalker walker_;
  AsyncioTasks result_;
  std::vector<uint64_t> order_;
  std::unordered_set<uint64_t> seen_;
  std::unordered_set<uint64_t> running_;
  std::unordered_map<uint64_t, uint64_t> running_thread_;
  std::vector<std::pair<uint64_t, uint64_t>> lock_waits_;  // (waiting task, lock)
  std::unordered_map<uint64_t, size_t> callback_counts_;   // by future
};

}  // namespace

std::string_view await_kind_name(AwaitKind kind) {
  switch (kind) {
    case AwaitKind::kNone: return "none";
    case AwaitKind::kTask: return "task";
    case AwaitKind::kFuture: return "future";
    case AwaitKind::kGather: return "gather";
    case AwaitKind::kTaskGroup: return "taskgroup";
    case AwaitKind::kSleep: return "sleep";
    case AwaitKind::kLock: return "lock";
    case AwaitKind::kEvent: return "event";
    case AwaitKind::kCondition: return "condition";
    case AwaitKind::kSemaphore: return "semaphore";
    case AwaitKind::kQueue: return "queue";
    case AwaitKind::kExecutor: return "executor";
    case AwaitKind::kOther: return "other";
  }
  return "other";
}

std::string_view task_state_name(TaskState state) {
  switch (state) {
    case TaskState::kPending: return "pending";
    case TaskState::kRunning: return "running";
    case TaskState::kDone: return "done";
    case TaskState::kCancelled: return "cancelled";
  }
  return "pending";
}

AsyncioTasks read_asyncio_tasks(const Target& target, const ProcessStacks& stacks,
                                const AsyncioOptions& options) {
  if (!stacks.layout) return {};
  return TaskReader(target, stacks, options).read();
}

}  // namespace hangpy::cpython
