// Reprs of target objects built from their memory only (no code of the target runs), in the
// shapes of CPython's libpython.py (Tools/gdb) so gdb users see what they know:
//   None, True, 42, 1.5, 'text', b'bytes', (1,), [1, 2], {'a': 1}, ValueError('text',)
//   <Thread(_name='worker', _target=<function at remote 0x...>, ...) at remote 0x...>
//       (instances of Python classes: their __dict__, nested objects too, cycles as <...>)
//   <built-in method acquire of _thread.lock object at remote 0x...>, <built-in function id>
//   <method-wrapper '__init__' of MyList object at 0x...>
//   <_thread.lock at remote 0x...>, <function at remote 0x...>, <module at remote 0x...>
//       (every other object: its type name and address)
// Bounded: the text stops at the length asked for ("...(truncated)", like libpython's), nesting
// at kMaxReprDepth, containers at kMaxReprItems items, strings at kMaxStringCodePoints.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "cpython/container_reader.h"
#include "cpython/object_reader.h"

namespace hangpy::cpython {

inline constexpr int kMaxReprDepth = 8;
inline constexpr size_t kMaxReprItems = 64;

// What a repr writes for an object it meets again. Python's own repr elides only a cycle (an
// object inside itself); gdb's libpython.py keeps one set of the objects written per repr, so an
// object met a second time anywhere in it is elided too (`_args=(...)` for the second Thread's
// shared empty tuple). The gdb commands print libpython's; coreanalyze prints Python's.
enum class RepeatedObjects { kPython, kLibpython };

class ObjectRepr {
 public:
  explicit ObjectRepr(const ObjectReader& objects, RepeatedObjects repeated = RepeatedObjects::kPython)
      : objects_(objects), containers_(objects), repeated_(repeated) {}

  // The repr, cut after `max_length` characters with "...(truncated)" appended.
  std::string repr(uint64_t object, size_t max_length) const;
  // The same, eliding (under libpython's rule) the objects already in `visited`, which gets the
  // objects this repr wrote: libpython.py's frame line writes all its locals with one set.
  std::string repr(uint64_t object, size_t max_length, std::set<uint64_t>& visited) const;
  // A builtin_function_or_method or method-wrapper object as libpython names it; nullopt when
  // the object is neither (or unreadable).
  std::optional<std::string> callable_repr(uint64_t object) const;

 private:
  struct Output {
    std::string text;
    size_t limit;
    std::set<uint64_t> visited;  // instances and containers being written: a cycle is "<...>"
    bool full() const { return text.size() > limit; }
  };
  void write(Output& out, uint64_t object, int depth) const;
  void write_instance(Output& out, uint64_t object, const std::string& type_name, int depth) const;
  void write_sequence(Output& out, uint64_t object, bool is_tuple, int depth) const;
  void write_dict(Output& out, uint64_t object, int depth) const;
  void write_exception(Output& out, uint64_t object, const std::string& type_name,
                       int depth) const;
  std::string repr_int(uint64_t object) const;
  std::string repr_float(uint64_t object) const;
  // At most `shown` characters of it are read.
  std::string repr_text(uint64_t object, bool is_unicode, size_t shown) const;
  std::optional<std::string> builtin_function_repr(uint64_t object) const;
  std::optional<std::string> method_wrapper_repr(uint64_t object) const;

  // Done writing `object`'s contents: met again later, it is elided only under libpython's rule.
  void leave(Output& out, uint64_t object) const {
    if (repeated_ == RepeatedObjects::kPython) out.visited.erase(object);
  }

  const ObjectReader& objects_;
  ContainerReader containers_;
  RepeatedObjects repeated_;
};

// Python's repr of a str's text: quotes chosen like Python, escapes for control characters.
std::string quote_string(const std::string& text, bool bytes_prefix = false);

}  // namespace hangpy::cpython
