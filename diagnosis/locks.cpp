#include "diagnosis/locks.h"

#include <algorithm>
#include <array>
#include <unordered_set>

#include "cpython/container_reader.h"
#include "cpython/instance_attributes.h"
#include "cpython/value_stack.h"

namespace hangpy::diagnosis {
namespace {

using cpython::kAbsent;
using cpython::LockModel;
using cpython::LockVariant;

constexpr size_t kValueStackWindow = 32;     // value-stack slots read per frame
constexpr size_t kFramesScanned = 64;        // innermost frames of a thread scanned for `with`
constexpr size_t kFramesForCandidates = 12;  // innermost frames whose variables are looked at
constexpr size_t kMaxGlobals = 2048;         // values of one module's globals looked at
constexpr size_t kMaxCandidates = 4096;
// Attributes of `self` that hold the lock of threading's and queue's classes.
constexpr std::array<std::string_view, 5> kLockAttributes = {"_lock", "_block", "mutex", "_mutex",
                                                             "lock"};

uint64_t header_size(const cpython::Layout& layout) {
  // PyObject_HEAD ends with ob_type: the object's own fields follow it.
  return static_cast<uint64_t>(layout.object.ob_type) + 8;
}

const LockVariant* variant_for(const LockVariant (&variants)[2], int64_t basicsize) {
  for (const LockVariant& variant : variants)
    if (variant.model != LockModel::kNone && variant.basicsize == basicsize) return &variant;
  return nullptr;
}

}  // namespace

bool LockReader::is_lock_type(uint64_t object, bool* reentrant) const {
  const cpython::LockLayout& locks = objects_.layout().locks;
  auto type = objects_.type_name_view(object);
  if (!type) return false;
  if (*type == locks.lock_type) {
    *reentrant = false;
    return true;
  }
  if (!locks.rlock_type.empty() && *type == locks.rlock_type) {
    *reentrant = true;
    return true;
  }
  return false;
}

std::optional<LockState> LockReader::read(uint64_t object) const {
  const cpython::Layout& layout = objects_.layout();
  const cpython::AddressSpace& memory = objects_.memory();
  LockState state;
  state.object = object;
  if (object == 0 || !is_lock_type(object, &state.reentrant)) return std::nullopt;
  auto type = objects_.type_of(object);
  if (!type) return std::nullopt;
  auto basicsize = cpython::read_value<int64_t>(
      memory, *type + static_cast<uint64_t>(layout.instances.type_basicsize));
  if (!basicsize) return std::nullopt;
  state.variant = variant_for(state.reentrant ? layout.locks.rlock : layout.locks.lock, *basicsize);
  if (!state.variant) return std::nullopt;
  const LockVariant& variant = *state.variant;
  const uint64_t lock_field = object + static_cast<uint64_t>(variant.lock);
  if (variant.owner != kAbsent) {
    auto owner = cpython::read_value<uint64_t>(memory, object + static_cast<uint64_t>(variant.owner));
    if (owner) {
      state.owner_ident = *owner;
      state.locked = *owner != 0;
    }
    if (variant.count != kAbsent && state.owner_ident != 0) {
      auto count = cpython::read_value<uint64_t>(memory, object + static_cast<uint64_t>(variant.count));
      if (count) state.count = *count + static_cast<uint64_t>(variant.count_bias);
    }
    return state;
  }
  if (variant.model == LockModel::kPyMutex) {
    // PyMutex: bit 0 is _Py_LOCKED, bit 1 _Py_HAS_PARKED.
    if (auto bits = cpython::read_value<uint8_t>(memory, lock_field)) state.locked = (*bits & 1) != 0;
  } else if (auto semaphore = cpython::read_pointer(memory, lock_field); semaphore && *semaphore) {
    // glibc's sem_t: the value is the low 32 bits of its first word (the waiters count the high
    // ones); a Lock's semaphore is 1 while free, 0 while held.
    if (auto value = cpython::read_value<uint32_t>(memory, *semaphore)) state.locked = *value == 0;
  }
  return state;
}

bool LockReader::waited_on_at(const LockState& lock, uint64_t futex_address) const {
  if (!lock.variant || futex_address == 0) return false;
  const cpython::AddressSpace& memory = objects_.memory();
  const uint64_t lock_field = lock.object + static_cast<uint64_t>(lock.variant->lock);
  if (lock.variant->model == LockModel::kSemaphorePointer) {
    auto semaphore = cpython::read_pointer(memory, lock_field);
    return semaphore && *semaphore == futex_address;
  }
  const int32_t parked = objects_.layout().locks.parked_address;
  if (parked == kAbsent) return false;
  auto address = cpython::read_pointer(memory, futex_address + static_cast<int64_t>(parked));
  return address && *address == lock_field;
}

std::vector<uint64_t> LockReader::value_stack(const cpython::PythonFrame& frame,
                                               const std::vector<cpython::PythonFrame>& frames) const {
  const auto window = cpython::value_stack_window(objects_, frame, frames, kValueStackWindow);
  if (!window) return {};
  std::vector<uint64_t> values;
  for (size_t i = 0; i < window->slots; ++i) {
    auto value = cpython::read_pointer(objects_.memory(), window->base + 8 * i);
    if (!value) break;
    values.push_back(*value & ~objects_.layout().frame.stack_ref_tag_mask);
  }
  return values;
}

// The name of a C method object: builtin_function_or_method (m_ml->ml_name, a C string) or
// method_descriptor (d_name, a str).
std::optional<std::string> LockReader::c_method_name(uint64_t object) const {
  const cpython::AddressSpace& memory = objects_.memory();
  const uint64_t header = header_size(objects_.layout());
  auto type = objects_.type_name_view(object);
  if (!type) return std::nullopt;
  if (*type == "method_descriptor") {
    // PyDescr_COMMON: d_type, d_name, d_qualname after the header.
    auto name = cpython::read_pointer(memory, object + header + 8);
    if (!name) return std::nullopt;
    auto text = objects_.read_string(*name);
    return text ? std::optional<std::string>(*text) : std::nullopt;
  }
  if (*type != "builtin_function_or_method") return std::nullopt;
  auto method_def = cpython::read_pointer(memory, object + header);  // m_ml
  if (!method_def || *method_def == 0) return std::nullopt;
  auto name_pointer = cpython::read_pointer(memory, *method_def);  // ml_name
  if (!name_pointer || *name_pointer == 0) return std::nullopt;
  std::array<char, 9> name{};
  std::span<std::byte> bytes(reinterpret_cast<std::byte*>(name.data()), name.size() - 1);
  if (!memory.read(*name_pointer, bytes)) return std::nullopt;
  return std::string(name.data());
}

std::vector<uint64_t> LockReader::held_through_with(const cpython::PythonThread& thread,
                                                    size_t first_frame, size_t end_frame) const {
  const cpython::AddressSpace& memory = objects_.memory();
  const uint64_t header = header_size(objects_.layout());
  std::vector<uint64_t> held;
  auto add_if_held = [&](uint64_t lock) {
    if (std::find(held.begin(), held.end(), lock) != held.end()) return;
    auto state = read(lock);
    if (!state || state->locked != true) return;  // a stale slot of a `with` that ended
    if (state->reentrant && state->owner_ident != thread.thread_id) return;
    held.push_back(lock);
  };
  for (size_t f = first_frame; f < thread.frames.size() && f < end_frame && f < kFramesScanned; ++f) {
    std::vector<uint64_t> slots = value_stack(thread.frames[f], thread.frames);
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i] == 0) continue;
      auto name = c_method_name(slots[i]);
      if (!name || *name != "__exit__") continue;
      auto type = objects_.type_name_view(slots[i]);
      if (type && *type == "method_descriptor") {
        if (i + 1 < slots.size()) add_if_held(slots[i + 1]);
        continue;
      }
      if (auto self = cpython::read_pointer(memory, slots[i] + header + 8); self && *self)
        add_if_held(*self);  // m_self
    }
  }
  return held;
}

std::vector<uint64_t> LockReader::candidate_locks(const std::vector<cpython::PythonThread>& threads) const {
  const cpython::Layout& layout = objects_.layout();
  const cpython::AddressSpace& memory = objects_.memory();
  cpython::ContainerReader containers(objects_);
  cpython::InstanceAttributes attributes(objects_);
  std::unordered_set<uint64_t> seen;
  std::unordered_set<uint64_t> globals_seen;
  std::vector<uint64_t> locks;
  const uint64_t header = header_size(layout);
  auto consider = [&](uint64_t object) {
    // A closure's variable is a cell among the fast slots (ob_ref after the header), and
    // `lock.acquire()` compiled with LOAD_ATTR (before 3.7) leaves a bound C method on the value
    // stack, its m_self the lock: the second pass looks one step through either, never further.
    for (int step = 0; step < 2; ++step) {
      if (object == 0 || locks.size() >= kMaxCandidates || !seen.insert(object).second) return;
      bool reentrant = false;
      if (is_lock_type(object, &reentrant)) {
        locks.push_back(object);
        return;
      }
      auto type = objects_.type_name_view(object);
      if (!type || *type == "str" || *type == "int" || *type == "NoneType" || *type == "function")
        return;
      if (*type == "cell" || *type == "builtin_function_or_method") {
        if (step > 0) return;
        auto inner = cpython::read_pointer(memory, object + header + (*type == "cell" ? 0 : 8));
        if (!inner) return;
        object = *inner;
        continue;
      }
      // An object that keeps a lock under one of the usual names (Condition, Queue, Semaphore).
      auto values = attributes.get_each(object, kLockAttributes);
      if (!values) return;
      for (uint64_t value : *values)
        if (value && seen.insert(value).second && is_lock_type(value, &reentrant)) locks.push_back(value);
      return;
    }
  };
  for (const cpython::PythonThread& thread : threads) {
    for (size_t f = 0; f < thread.frames.size() && f < kFramesForCandidates; ++f) {
      const cpython::PythonFrame& frame = thread.frames[f];
      for (uint64_t value : value_stack(frame, thread.frames)) consider(value);
      if (layout.frame.localsplus != kAbsent) {
        // The fast slots just below the value stack: locals, arguments, cells.
        const uint64_t slots = frame.address + static_cast<uint64_t>(layout.frame.localsplus);
        for (size_t i = 0; i < 16; ++i) {
          auto value = cpython::read_pointer(memory, slots + 8 * i);
          if (!value) break;
          consider(*value & ~layout.frame.stack_ref_tag_mask);
        }
      }
      if (layout.variables.frame_globals == kAbsent) continue;
      auto globals = cpython::read_pointer(memory, frame.address + static_cast<uint64_t>(layout.variables.frame_globals));
      if (!globals || *globals == 0 || !globals_seen.insert(*globals).second) continue;
      auto items = containers.dict_items(*globals, kMaxGlobals);
      if (!items) continue;
      for (const auto& item : *items) {
        bool reentrant = false;
        if (seen.insert(item.second).second && is_lock_type(item.second, &reentrant))
          locks.push_back(item.second);
      }
    }
  }
  return locks;
}

}  // namespace hangpy::diagnosis
