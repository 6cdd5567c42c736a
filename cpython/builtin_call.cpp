#include "cpython/builtin_call.h"

#include <algorithm>
#include <cstring>

#include "cpython/object_repr.h"

namespace hangpy::cpython {
namespace {

// Without symbols a function's size is unknown: a pc this close after its start counts as in it.
constexpr uint64_t kFunctionSpan = 16 * 1024;
constexpr uint64_t kLowestObjectAddress = 0x10000;

bool runs(uint64_t function, std::span<const uint64_t> pcs) {
  if (function == 0) return false;
  return std::any_of(pcs.begin(), pcs.end(), [function](uint64_t pc) {
    return pc >= function && pc - function < kFunctionSpan;
  });
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
  std::vector<uint64_t> seen;
  ObjectRepr printer(objects);
  for (size_t at = 0; at + 8 <= words->size(); at += 8) {
    uint64_t word = 0;
    std::memcpy(&word, words->data() + at, 8);
    // Objects are 8-aligned and never on the stack range being scanned.
    if (word < kLowestObjectAddress || (word & 7) != 0 || (word >= low && word < high)) continue;
    if (std::find(seen.begin(), seen.end(), word) != seen.end()) continue;
    seen.push_back(word);
    auto type = objects.type_name(word);
    if (!type || (*type != "builtin_function_or_method" && *type != "method-wrapper")) continue;
    auto functions = c_functions(objects, word, *type);
    if (std::none_of(functions.begin(), functions.end(),
                     [pcs](uint64_t function) { return runs(function, pcs); }))
      continue;
    if (auto line = printer.callable_repr(word)) calls.push_back({word, *line});
  }
  return calls;
}

}  // namespace hangpy::cpython
