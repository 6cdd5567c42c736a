#include "cpython/builtin_call.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_set>
#include <utility>

#include "cpython/object_repr.h"

namespace hangpy::cpython {
namespace {

// Without symbols a function's size is unknown: a pc this close after its start counts as in it.
constexpr uint64_t kFunctionSpan = 16 * 1024;
constexpr uint64_t kLowestObjectAddress = 0x10000;

// The innermost of `pcs` that lies in `function`; nullopt when none does.
std::optional<size_t> running_at(uint64_t function, std::span<const uint64_t> pcs) {
  if (function == 0) return std::nullopt;
  for (size_t i = 0; i < pcs.size(); ++i)
    if (pcs[i] >= function && pcs[i] - function < kFunctionSpan) return i;
  return std::nullopt;
}

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
  }
  return functions;
}

}  // namespace

std::vector<BuiltinCall> find_builtin_calls(const ObjectReader& objects, uint64_t low,
                                            uint64_t high, std::span<const uint64_t> pcs) {
  std::vector<BuiltinCall> calls;
  low = (low + 7) & ~uint64_t{7};
  if (high <= low) return calls;
  high = std::min(high, low + kMaxBuiltinScanBytes);
  auto words = read_bytes(objects.memory(), low, high - low);
  if (!words) return calls;
  std::unordered_set<uint64_t> seen;
  struct Candidate {
    uint64_t object;
    std::vector<uint64_t> functions;  // the C functions it calls, one of them running
  };
  std::vector<Candidate> candidates;
  const uint64_t tag_mask = objects.layout().frame.stack_ref_tag_mask;
  for (size_t at = 0; at + 8 <= words->size(); at += 8) {
    uint64_t word = 0;
    std::memcpy(&word, words->data() + at, 8);
    word &= ~tag_mask;  // from 3.14 the eval loop passes tagged stack references
    // Objects are 8-aligned and never on the stack range being scanned.
    if (word < kLowestObjectAddress || (word & 7) != 0 || (word >= low && word < high)) continue;
    if (!seen.insert(word).second) continue;
    auto type = objects.type_name(word);
    if (!type || (*type != "builtin_function_or_method" && *type != "method-wrapper")) continue;
    auto functions = c_functions(objects, word, *type);
    if (std::any_of(functions.begin(), functions.end(),
                    [pcs](uint64_t function) { return running_at(function, pcs).has_value(); }))
      candidates.push_back({word, std::move(functions)});
  }
  // Which frame runs each call: a pc belongs to the candidate function that starts closest
  // before it (function sizes are unknown); innermost call first, as libpython lists C frames.
  std::vector<uint64_t> starts;
  for (const Candidate& candidate : candidates)
    starts.insert(starts.end(), candidate.functions.begin(), candidate.functions.end());
  auto owns = [&starts](uint64_t function, uint64_t pc) {
    if (function == 0 || pc < function || pc - function >= kFunctionSpan) return false;
    return std::none_of(starts.begin(), starts.end(),
                        [function, pc](uint64_t other) { return other > function && other <= pc; });
  };
  std::vector<std::pair<size_t, uint64_t>> ordered;  // (frame, object)
  for (const Candidate& candidate : candidates) {
    size_t frame = pcs.size();
    for (size_t i = 0; i < pcs.size() && frame == pcs.size(); ++i)
      for (uint64_t function : candidate.functions)
        if (owns(function, pcs[i])) frame = i;
    ordered.emplace_back(frame, candidate.object);
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  ObjectRepr printer(objects);
  for (const auto& [frame, object] : ordered)
    if (auto line = printer.callable_repr(object)) calls.push_back({object, *line});
  return calls;
}

}  // namespace hangpy::cpython
