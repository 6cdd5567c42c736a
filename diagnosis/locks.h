// threading.Lock and RLock objects in the target: what shape they have (the layout's lock
// variants), whether they are held and by whom (RLock), which futex a thread blocked on one waits
// on, and which locks a thread holds through `with lock:` (the lock's bound __exit__ on its
// frames' value stacks). Every read is bounded; nothing here guesses an owner.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cpython/object_reader.h"
#include "cpython/stacks.h"

namespace hangpy::diagnosis {

struct LockState {
  uint64_t object = 0;
  bool reentrant = false;  // RLock
  const cpython::LockVariant* variant = nullptr;
  std::optional<bool> locked;    // nullopt: cannot be read
  uint64_t owner_ident = 0;      // RLock: the owner's threading.get_ident(), 0 when free
  std::optional<uint64_t> count; // RLock: how many times the owner holds it
};

class LockReader {
 public:
  explicit LockReader(const cpython::ObjectReader& objects) : objects_(objects) {}

  // The lock's state, or nullopt when `object` is no Lock/RLock of a shape the layout knows.
  std::optional<LockState> read(uint64_t object) const;
  // Whether a thread in futex() on `futex_address` is blocked acquiring this lock.
  bool waited_on_at(const LockState& lock, uint64_t futex_address) const;

  // Every Lock/RLock reachable cheaply from the frames: their locals, `self`'s usual lock
  // attributes, and the values of their globals (module-level locks), at most a bounded number.
  std::vector<uint64_t> candidate_locks(const std::vector<cpython::PythonThread>& threads) const;
  // The locks the thread holds through `with`: a lock's bound __exit__ (3.14: the __exit__
  // descriptor followed by the lock) in a frame's value-stack slots, the lock being held now.
  // Only frames [first_frame, end_frame) (innermost first) are looked at.
  std::vector<uint64_t> held_through_with(const cpython::PythonThread& thread, size_t first_frame = 0,
                                          size_t end_frame = SIZE_MAX) const;

 private:
  bool is_lock_type(uint64_t object, bool* reentrant) const;
  std::optional<std::string> c_method_name(uint64_t object) const;
  // `frames` are the thread's (frame among them): from 3.11 they share one data stack, and the
  // window ends where the next frame begins.
  std::vector<uint64_t> value_stack(const cpython::PythonFrame& frame,
                                    const std::vector<cpython::PythonFrame>& frames) const;

  const cpython::ObjectReader& objects_;
};

}  // namespace hangpy::diagnosis
