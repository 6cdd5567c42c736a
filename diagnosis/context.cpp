#include "diagnosis/context.h"

#include "cpython/frame_variables.h"
#include "cpython/instance_attributes.h"

namespace hangpy::diagnosis::detail {

using cpython::kAbsent;

const std::vector<LockState>& candidate_locks(const Context& context) {
  if (context.candidates) return *context.candidates;
  if (context.memo != nullptr && context.memo->candidate_locks) return *(context.candidates = *context.memo->candidate_locks);
  std::vector<LockState>& read = context.candidates.emplace();
  for (uint64_t object : context.locks.candidate_locks(context.stacks.threads))
    if (auto state = context.locks.read(object)) read.push_back(*state);
  if (context.memo != nullptr) context.memo->candidate_locks = read;
  return read;
}

std::optional<size_t> thread_by_ident(const Context& context, uint64_t ident) {
  for (size_t i = 0; i < context.stacks.threads.size(); ++i)
    if (context.stacks.threads[i].thread_id == ident) return i;
  return std::nullopt;
}

std::optional<size_t> thread_by_lwp(const Context& context, int64_t lwp) {
  for (size_t i = 0; i < context.stacks.threads.size(); ++i) {
    const auto& native = context.stacks.threads[i].native_thread_id;
    if (native && static_cast<int64_t>(*native) == lwp) return i;
  }
  return std::nullopt;
}

std::optional<int64_t> lwp_of(const Context& context, size_t index) {
  const auto& native = context.stacks.threads[index].native_thread_id;
  return native ? std::optional<int64_t>(static_cast<int64_t>(*native)) : std::nullopt;
}

// `self` of a frame, 0 when it has none.
uint64_t frame_self(const Context& context, const cpython::PythonFrame& frame) {
  cpython::VariableReader variables(context.memory, context.layout);
  auto found = variables.lookup(frame, "self", cpython::VariableReader::Want::kObjectOnly);
  if (!found || !*found || (*found)->scope != cpython::Scope::kLocal) return 0;
  return (*found)->variable.object;
}

std::string type_name(const Context& context, uint64_t object) {
  auto name = context.objects.type_name(object);
  return name ? *name : std::string();
}

std::optional<uint64_t> int_attribute(const Context& context, uint64_t instance, std::string_view name) {
  cpython::InstanceAttributes attributes(context.objects);
  auto value = attributes.get(instance, name);
  if (!value || *value == 0) return std::nullopt;
  auto type = type_name(context, *value);
  if (type != "int" && type != "long" && type != "bool") return std::nullopt;
  if (type == "bool" && context.layout.variables.machine_int_value != kAbsent) {
    auto flag = cpython::read_value<int64_t>(
        context.memory, *value + static_cast<uint64_t>(context.layout.variables.machine_int_value));
    return flag ? std::optional<uint64_t>(static_cast<uint64_t>(*flag)) : std::nullopt;
  }
  if (type == "bool") {
    // A bool stores digits like an int (3.x): zero digits is False.
    auto digits = context.objects.read_int_digits(*value, 2);
    if (!digits) return std::nullopt;
    return digits->digits.empty() || digits->digits[0] == 0 ? 0 : 1;
  }
  auto number = context.objects.read_uint64(*value);
  return number ? std::optional<uint64_t>(*number) : std::nullopt;
}

// Whether some thread of the process has this pthread_t (its thread pointer); nullopt when the
// registers do not say (a core without them, threads read in their system calls).
std::optional<bool> thread_pointer_exists(const Context& context, uint64_t pointer) {
  if (context.os_threads.empty()) return std::nullopt;
  for (const auto& [lwp, thread] : context.os_threads) {
    if (thread->fs_base == 0) return std::nullopt;
    if (thread->fs_base == pointer) return true;
  }
  return false;
}

// Whether the process has no thread but the waiter: then no other thread can release a plain
// Lock it waits for (which records no holder).
bool only_thread(const Context& context) {
  if (!context.os_threads.empty()) return context.os_threads.size() == 1;
  return context.stacks.threads.size() == 1;
}

}  // namespace hangpy::diagnosis::detail
