#include "cpython/builtin_call.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_set>
#include <utility>

#include "cpython/object_repr.h"

namespace hangpy::cpython {
namespace {

// Where a module's unwind table does not bound a function (unreadable, or another linker's
// table), a pc this close after the function's start counts as in it.
constexpr uint64_t kFunctionSpan = 16 * 1024;
constexpr uint64_t kLowestObjectAddress = 0x10000;

// Each pc with the bounds of the function it is in: a caller's pc is a return address, which
// may be one past its function's end (a call as the last instruction), and an innermost pc may
// be the first instruction of a function (a breakpoint on it), so the function of pc - 1 counts
// too.
class CodePlaces {
 public:
  CodePlaces(std::span<const uint64_t> pcs, const FunctionRanges* ranges) : pcs_(pcs) {
    for (uint64_t pc : pcs) {
      Bounds bounds;
      if (ranges) {
        bounds.at = ranges->function_at(pc);
        if (pc > 0) bounds.before = ranges->function_at(pc - 1);
      }
      bounds_.push_back(bounds);
    }
  }
  size_t size() const { return pcs_.size(); }
  bool bounded(size_t i) const { return bounds_[i].at || bounds_[i].before; }
  // Whether frame i runs the function that starts at `function`; `other_starts` are the other
  // candidates' functions, which an unbounded pc belongs to when one starts closer before it.
  bool runs(size_t i, uint64_t function, std::span<const uint64_t> other_starts) const {
    if (function == 0) return false;
    if (bounded(i)) {
      return (bounds_[i].at && bounds_[i].at->start == function) ||
             (bounds_[i].before && bounds_[i].before->start == function);
    }
    const uint64_t pc = pcs_[i];
    if (pc < function || pc - function >= kFunctionSpan) return false;
    return std::none_of(other_starts.begin(), other_starts.end(),
                        [function, pc](uint64_t other) { return other > function && other <= pc; });
  }

 private:
  struct Bounds {
    std::optional<MemoryRange> at, before;
  };
  std::span<const uint64_t> pcs_;
  std::vector<Bounds> bounds_;
};

// The C functions a built-in callable runs when called.
std::vector<uint64_t> c_functions(const ObjectReader& objects, uint64_t object,
                                  const std::string& type_name) {
  const AddressSpace& memory = objects.memory();
  const CallablesLayout& c = objects.layout().callables;
  std::vector<uint64_t> functions;
  if (type_name == "builtin_function_or_method") {
    auto method_def = read_pointer(memory, object + static_cast<uint64_t>(c.cfunction_method_def));
    if (!method_def || *method_def == 0) return functions;
    if (auto meth = read_pointer(memory, *method_def + static_cast<uint64_t>(c.method_def_function)))
      functions.push_back(*meth);
  } else {
    auto descriptor = read_pointer(memory, object + static_cast<uint64_t>(c.method_wrapper_descriptor));
    if (!descriptor || *descriptor == 0) return functions;
    if (auto wrapped = read_pointer(memory, *descriptor + static_cast<uint64_t>(c.wrapper_descriptor_wrapped)))
      functions.push_back(*wrapped);
    auto base = read_pointer(memory, *descriptor + static_cast<uint64_t>(c.wrapper_descriptor_base));
    if (base && *base != 0) {
      if (auto wrapper = read_pointer(memory, *base + static_cast<uint64_t>(c.wrapper_base_wrapper)))
        functions.push_back(*wrapper);
    }
    // The method-wrapper type's own call slot (wrapper_call), which runs before either: a
    // breakpoint on it stops where neither has started (CPython's test_wrapper_call). Not for
    // builtin_function_or_method, whose call slot runs every such call: there the C function
    // itself tells which one runs.
    auto type = read_pointer(memory, object + static_cast<uint64_t>(objects.layout().object.ob_type));
    if (type && *type != 0) {
      if (auto call = read_pointer(memory, *type + static_cast<uint64_t>(objects.layout().instances.type_call)))
        functions.push_back(*call);
    }
  }
  return functions;
}

}  // namespace

std::vector<BuiltinCall> find_builtin_calls(const ObjectReader& objects, uint64_t low,
                                            uint64_t high, std::span<const uint64_t> pcs,
                                            const FunctionRanges* ranges,
                                            std::optional<ValueStackWindow> value_stack,
                                            std::span<const uint64_t> innermost_registers) {
  std::vector<BuiltinCall> calls;
  low = (low + 7) & ~uint64_t{7};
  if (high <= low || pcs.empty()) return calls;
  high = std::min(high, low + kMaxBuiltinScanBytes);
  const CodePlaces places(pcs, ranges);
  std::unordered_set<uint64_t> seen;
  struct Candidate {
    uint64_t object;
    std::vector<uint64_t> functions;  // the C functions it calls, one of them running
  };
  std::vector<Candidate> candidates;
  const Layout& layout = objects.layout();
  const uint64_t tag_mask = layout.frame.stack_ref_tag_mask;
  auto runs_anywhere = [&places](uint64_t function) {
    for (size_t i = 0; i < places.size(); ++i)
      if (places.runs(i, function, {})) return true;
    return false;
  };
  // A slot above the value stack's top may hold a callable of a call that returned. A module's
  // function lives as long as its module and is made for no call: it counts while alive (a freed
  // one on a free list still looks like one) and while its C function runs. A bound method is
  // made for its call, or kept by others (a Condition keeps its lock's acquire): another one of
  // the same C function may be what runs, so a stale slot cannot say which; the native stack
  // finds those.
  auto module_function_alive = [&](uint64_t object, const std::string& type) {
    if (type != "builtin_function_or_method") return false;
    auto self = read_pointer(objects.memory(), object + static_cast<uint64_t>(layout.callables.cfunction_self));
    if (!self) return false;
    if (*self != 0) {
      auto self_type = objects.type_name(*self);
      if (!self_type || *self_type != "module") return false;
    }
    if (layout.object.ob_refcnt == kAbsent) return true;  // no single count to read
    auto count = read_value<int64_t>(objects.memory(),
                                     object + static_cast<uint64_t>(layout.object.ob_refcnt));
    return count && *count > 0;
  };
  auto consider = [&](uint64_t word, bool stale_possible) {
    word &= ~tag_mask;  // from 3.14 the eval loop passes tagged stack references
    // Objects are 8-aligned and never on the stack range being scanned.
    if (word < kLowestObjectAddress || (word & 7) != 0 || (word >= low && word < high)) return;
    if (!seen.insert(word).second) return;
    auto type = objects.type_name(word);
    if (!type || (*type != "builtin_function_or_method" && *type != "method-wrapper")) return;
    if (stale_possible && !module_function_alive(word, *type)) return;
    auto functions = c_functions(objects, word, *type);
    if (std::any_of(functions.begin(), functions.end(), runs_anywhere))
      candidates.push_back({word, std::move(functions)});
  };
  auto scan = [&](uint64_t from, uint64_t size, bool stale_possible) {
    auto words = read_bytes(objects.memory(), from, size);
    if (!words) return;
    for (size_t at = 0; at + 8 <= words->size(); at += 8) {
      uint64_t word = 0;
      std::memcpy(&word, words->data() + at, 8);
      consider(word, stale_possible);
    }
  };
  // The innermost frame's registers first: at a breakpoint on a function's first instructions
  // its arguments (the called object) are in registers and on no stack yet.
  for (uint64_t value : innermost_registers) consider(value, false);
  scan(low, high - low, false);
  if (value_stack && (value_stack->base & 7) == 0) scan(value_stack->base, 8 * value_stack->slots, true);
  // Which frame runs each call (an unbounded pc belongs to the candidate function that starts
  // closest before it); innermost call first, as libpython lists C frames.
  std::vector<uint64_t> starts;
  for (const Candidate& candidate : candidates)
    starts.insert(starts.end(), candidate.functions.begin(), candidate.functions.end());
  std::vector<std::pair<size_t, uint64_t>> ordered;  // (frame, object)
  for (const Candidate& candidate : candidates) {
    size_t frame = pcs.size();
    for (size_t i = 0; i < pcs.size() && frame == pcs.size(); ++i)
      for (uint64_t function : candidate.functions)
        if (places.runs(i, function, starts)) frame = i;
    ordered.emplace_back(frame, candidate.object);  // pcs.size(): an unbounded guess, last
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  ObjectRepr printer(objects);
  for (const auto& [frame, object] : ordered)
    if (auto line = printer.callable_repr(object)) calls.push_back({object, *line, frame});
  return calls;
}

}  // namespace hangpy::cpython
