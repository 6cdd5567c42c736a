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

#include "cpython/asyncio_task_lists.h"
#include "cpython/container_reader.h"
#include "cpython/frame_variables.h"
#include "cpython/instance_attributes.h"
#include "cpython/object_reader.h"
#include "cpython/stack_walker.h"

namespace hangpy::cpython {
namespace {

constexpr size_t kMaxChainDepth = 512;            // awaits nested deeper are cut
constexpr size_t kMaxCallbacksRead = 16;  // enough to recognise who added them
constexpr size_t kMaxStackSlotsScanned = 512;

// Reads each task the finder found: its state, its coroutine chain, what it awaits.
class TaskReader : private TaskFinder {
 public:
  TaskReader(const Target& target, const ProcessStacks& stacks, const AsyncioOptions& options)
      : TaskFinder(target, stacks),
        options_(options),
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
    find();
    if (!result_.imported) return result_;
    result_.total = order_.size();
    for (uint64_t task : order_) {
      if (result_.tasks.size() >= options_.max_tasks) break;
      result_.tasks.push_back(read_task(task));
    }
    find_lock_holders();
    find_group_parents();
    // Set and list order says nothing: by name, so that two runs print alike.
    std::stable_sort(result_.tasks.begin(), result_.tasks.end(),
                     [](const AsyncTask& a, const AsyncTask& b) { return a.name < b.name; });
    return std::move(result_);
  }

 private:
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
    if (awaited != 0) task.awaited = read_awaited(task, awaited);
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

  // What the task awaits: the object, and what asyncio's own code around it tells.
  Awaited read_awaited(const AsyncTask& task, uint64_t object) {
    Awaited awaited;
    awaited.object = object;
    awaited.type = type_of(object);
    if (is_task(object)) {
      awaited.is_task = true;
      awaited.task_name = task_name(object);
      if (awaited.task_name.empty()) awaited.task_name = fmt::format("Task at 0x{:x}", object);
      return awaited;
    }
    if (awaited.type == "_GatheringFuture") {
      if (auto children = attributes_.get(object, "_children"); children && *children != 0) {
        if (auto items = containers_.list_items(*children, 4096))
          for (uint64_t child : *items)
            if (is_task(child)) awaited.member_tasks.push_back(child);
      }
      return awaited;
    }
    awaited.callbacks = callback_count(object);
    if (!task.coroutine_stack.empty()) {
      const PythonFrame& inner = task.coroutine_stack.front();
      auto in = [&inner](std::string_view file) { return inner.file.ends_with(file); };
      if (in("asyncio/tasks.py") && inner.function == "sleep") {
        awaited.site = AwaitSite::kSleep;
        read_sleep(inner, awaited);
        return awaited;
      }
      const AwaitSite site = in("asyncio/locks.py")    ? AwaitSite::kLocks
                             : in("asyncio/queues.py") ? AwaitSite::kQueues
                             : in("asyncio/taskgroups.py") ? AwaitSite::kTaskGroup
                                                           : AwaitSite::kElsewhere;
      if (site != AwaitSite::kElsewhere) {
        awaited.site = site;
        awaited.site_function = inner.function;
        const uint64_t self = innermost_self(task);
        if (self) awaited.self_type = type_of(self);
        if (site == AwaitSite::kLocks && awaited.self_type == "Lock") lock_waits_.emplace_back(task.address, self);
        if (site == AwaitSite::kTaskGroup && self) {
          if (auto members = attributes_.get(self, "_tasks"); members && *members != 0)
            for (uint64_t child : set_members(*members, "TaskGroup._tasks"))
              if (is_task(child)) awaited.member_tasks.push_back(child);
        }
        return awaited;
      }
    }
    read_executor(object, awaited);
    return awaited;
  }

  void read_sleep(const PythonFrame& sleep, Awaited& awaited) {
    auto delay = variables_.lookup(sleep, "delay");
    if (delay && *delay) awaited.sleep_delay = (*delay)->variable.repr;
    if (!options_.monotonic_now) return;
    // The timer handle the sleep scheduled knows when it is due, in loop.time() (monotonic).
    auto handle = variables_.lookup(sleep, "h", VariableReader::Want::kObjectOnly);
    if (!handle || !*handle) return;
    // TimerHandle keeps _when in a __slots__ member, not in a __dict__.
    auto when = attributes_.slot((*handle)->variable.object, "_when");
    if (!when || *when == 0 || type_of(*when) != "float") return;
    auto due = read_at<double>(memory_, *when, layout_.variables.float_value);
    if (!due || !std::isfinite(*due)) return;
    awaited.sleep_due_in = std::max(0.0, *due - *options_.monotonic_now);
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
  void read_executor(uint64_t future, Awaited& awaited) {
    std::vector<uint64_t> cell_values;
    for (uint64_t callback : callbacks(future)) {
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
    if (cell_values.empty()) return;
    awaited.executor = true;
    for (const PythonThread& thread : stacks_.threads) {
      for (const PythonFrame& frame : thread.frames) {
        if (frame.function != "run" || !frame.file.ends_with("concurrent/futures/thread.py")) continue;
        auto self = variables_.lookup(frame, "self", VariableReader::Want::kObjectOnly);
        if (!self || !*self) continue;
        auto worker_future = attributes_.get((*self)->variable.object, "future");
        if (worker_future && std::find(cell_values.begin(), cell_values.end(), *worker_future) != cell_values.end()) {
          awaited.executor_thread = thread.thread_id;
          awaited.executor_thread_name = thread.name;
        }
      }
    }
  }

  // --- across tasks ------------------------------------------------------------------------

  // The holders of the asyncio.Locks waited for: pending tasks that do not wait for the same
  // lock and hold it in a frame. One pass over every task's frames for all the locks.
  void find_lock_holders() {
    if (lock_waits_.empty()) return;
    std::unordered_map<uint64_t, std::vector<uint64_t>> waiters_of;  // lock -> waiting tasks
    for (const auto& [waiter, lock] : lock_waits_) waiters_of[lock].push_back(waiter);
    std::unordered_map<uint64_t, std::vector<uint64_t>> holders_of;
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
    std::unordered_map<uint64_t, AsyncTask*> by_address;
    for (AsyncTask& task : result_.tasks) by_address[task.address] = &task;
    for (const auto& [waiter, lock] : lock_waits_) {
      AsyncTask* task = by_address[waiter];
      if (task->awaited) task->awaited->lock_holders = holders_of[lock];
    }
  }

  // TaskGroup children: the group's _on_task_done, a bound method, is among each child's
  // callbacks, and the group knows its parent task.
  void find_group_parents() {
    for (AsyncTask& task : result_.tasks) {
      for (uint64_t callback : callbacks(task.address)) {
        if (type_of(callback) != "method") continue;
        auto self = read_at<uint64_t>(memory_, callback, a_.method_self);
        if (!self || *self == 0 || type_of(*self) != "TaskGroup") continue;
        auto parent = attributes_.get(*self, "_parent_task");
        if (parent && *parent != 0 && *parent != task.address &&
            std::find(task.group_parents.begin(), task.group_parents.end(), *parent) == task.group_parents.end())
          task.group_parents.push_back(*parent);
      }
    }
  }

  const AsyncioOptions& options_;
  VariableReader variables_;
  StackWalker walker_;
  std::vector<std::pair<uint64_t, uint64_t>> lock_waits_;  // (waiting task, lock)
  std::unordered_map<uint64_t, size_t> callback_counts_;   // by future
};

}  // namespace

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
