#include "report/diagnosis_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/printable.h"
#include "diagnosis/syscalls.h"
#include "diagnosis/wait_ends.h"

namespace hangpy::report {
namespace {

std::string syscall_text(const diagnosis::ThreadDiagnosis& thread) {
  if (!thread.syscall) return "not in a system call";
  const std::string name = thread.syscall_name.empty() ? fmt::format("system call {}", *thread.syscall)
                                                       : thread.syscall_name;
  // The first argument says most: a futex's address, the pid wait4 waits for, a read's fd.
  const diagnosis::SyscallKind kind = diagnosis::syscall_kind(*thread.syscall);
  const bool number = kind == diagnosis::SyscallKind::kChildWait || kind == diagnosis::SyscallKind::kRead ||
                      kind == diagnosis::SyscallKind::kSocket;
  if (thread.syscall_arguments_lost) return fmt::format("in {} (arguments lost)", name);
  if (number) return fmt::format("in {}({})", name, static_cast<int32_t>(thread.syscall_arguments[0]));
  return fmt::format("in {}(0x{:x})", name, thread.syscall_arguments[0]);
}

nlohmann::json optional_json(const auto& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

std::string format_process_diagnosis(const diagnosis::ProcessDiagnosis& diagnosis) {
  std::string text;
  for (const diagnosis::WaitCycle& cycle : diagnosis.cycles) text += for_terminal(cycle.text) + "\n";
  for (const diagnosis::BlockedLoop& loop : diagnosis.blocked_loops) text += for_terminal(loop.text) + "\n";
  for (size_t i = 0; i < diagnosis.chains.size() && i < diagnosis::kMaxWaitChainsNamed; ++i)
    text += for_terminal(diagnosis.chains[i].text) + "\n";
  if (diagnosis.chains.size() > diagnosis::kMaxWaitChainsNamed)
    text += fmt::format("and {} more wait chains (--json lists them)\n",
                        diagnosis.chains.size() - diagnosis::kMaxWaitChainsNamed);
  if (diagnosis.no_gil) text += "Free-threaded build running without a GIL\n";
  return text.empty() ? text : text + "\n";
}

std::string format_thread_diagnosis(const diagnosis::ThreadDiagnosis& thread,
                                    const cpython::ProcessStacks& stacks) {
  std::vector<std::string> parts;
  if (thread.main_thread) parts.push_back("main thread");
  if (thread.daemon == true) parts.push_back("daemon");
  if (thread.gil == diagnosis::GilState::kHolds) parts.push_back("holds the GIL");
  if (thread.gil == diagnosis::GilState::kWaits) parts.push_back("waits for the GIL");
  if (thread.in_gc) parts.push_back("in garbage collection");
  if (thread.idle) parts.push_back("idle (waiting for work)");
  parts.push_back(thread.registers_known ? syscall_text(thread) : "system call unknown");
  std::string text = fmt::format("  State: {}\n", fmt::join(parts, ", "));
  // Descriptions hold thread names, paths and links the target gave: escaped for the terminal.
  text += "  Blocked on: " + for_terminal(diagnosis::describe_blocked_on(thread.blocked_on, stacks)) + "\n";
  if (const auto& blocked = thread.blocked_on; blocked.worker_lwp) {
    text += fmt::format("  Run by: LWP {}, the backend's worker{}\n", *blocked.worker_lwp,
                        blocked.worker_waits.empty() ? "" : ", which " + for_terminal(blocked.worker_waits));
  }
  // What it holds is what others may wait for: a deadlock's other half, a fork's lost lock.
  if (!thread.held_locks.empty()) {
    std::vector<std::string> held;
    for (uint64_t lock : thread.held_locks) held.push_back(fmt::format("0x{:x}", lock));
    text += fmt::format("  Holds: lock{} {}\n", held.size() == 1 ? "" : "s", fmt::join(held, ", "));
  }
  return text;
}

void add_diagnosis(nlohmann::json& document, const cpython::ProcessStacks& stacks,
                   const diagnosis::ProcessDiagnosis& diagnosis) {
  nlohmann::json& threads = document["threads"];
  for (size_t i = 0; i < diagnosis.threads.size() && i < threads.size(); ++i) {
    const diagnosis::ThreadDiagnosis& thread = diagnosis.threads[i];
    nlohmann::json syscall = nullptr;
    if (thread.syscall) {
      nlohmann::json arguments = nlohmann::json::array();
      for (uint64_t argument : thread.syscall_arguments) arguments.push_back(fmt::format("0x{:x}", argument));
      if (thread.syscall_arguments_lost) arguments = nullptr;
      syscall = {{"number", *thread.syscall},
                 {"name", thread.syscall_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(thread.syscall_name)},
                 {"arguments", std::move(arguments)}};
    }
    nlohmann::json held = nlohmann::json::array();
    for (uint64_t lock : thread.held_locks) held.push_back(fmt::format("0x{:x}", lock));
    threads[i]["state"] = {
        {"main_thread", thread.main_thread},
        {"daemon", optional_json(thread.daemon)},
        {"gil", diagnosis::gil_state_name(thread.gil)},
        {"in_gc", thread.in_gc},
        {"syscall", std::move(syscall)},
        {"held_locks", std::move(held)},
    };
    const diagnosis::BlockedOn& blocked = thread.blocked_on;
    nlohmann::json owner_thread_id = nullptr;
    if (blocked.owner && *blocked.owner < stacks.threads.size())
      owner_thread_id = stacks.threads[*blocked.owner].thread_id;
    else if (blocked.gone_owner_ident)
      owner_thread_id = *blocked.gone_owner_ident;  // as the lock records it: no thread here
    threads[i]["blocked_on"] = {
        {"kind", diagnosis::wait_kind_name(blocked.kind)},
        {"description", diagnosis::describe_blocked_on(blocked, stacks)},
        {"object", blocked.object ? nlohmann::json(fmt::format("0x{:x}", *blocked.object)) : nlohmann::json(nullptr)},
        {"owner_thread_id", std::move(owner_thread_id)},
        {"owner_native_thread_id", optional_json(blocked.owner_lwp)},
        {"owner_unknown", blocked.owner_unknown},
        {"holder_gone", blocked.holder_gone},
        {"child_pid", optional_json(blocked.child_pid)},
        {"child_namespace_pid", optional_json(blocked.child_namespace_pid)},
        {"other_end_pids", blocked.other_end_pids},
        {"fd", optional_json(blocked.fd)},
        {"child_pipe_fds", blocked.child_pipe_fds},
        {"worker_native_thread_id", optional_json(blocked.worker_lwp)},
        {"worker_waits", blocked.worker_waits.empty() ? nlohmann::json(nullptr) : nlohmann::json(blocked.worker_waits)},
    };
    threads[i]["state"]["idle"] = thread.idle;
  }
  // The roles of the threads that run no Python, where their native stacks named one.
  if (auto others = document.find("threads_without_python"); others != document.end() && others->is_array()) {
    for (nlohmann::json& other : *others) {
      auto lwp = other.find("native_thread_id");
      if (lwp == other.end() || !lwp->is_number_integer()) continue;
      auto role = diagnosis.native_roles.find(lwp->get<int64_t>());
      if (role != diagnosis.native_roles.end()) other["role"] = role->second;
    }
  }
  nlohmann::json deadlocks = nlohmann::json::array();
  for (const diagnosis::WaitCycle& cycle : diagnosis.cycles) {
    nlohmann::json members = nlohmann::json::array();
    for (size_t index : cycle.threads) {
      const cpython::PythonThread& thread = stacks.threads[index];
      members.push_back({{"thread_id", thread.thread_id},
                         {"native_thread_id", optional_json(thread.native_thread_id)},
                         {"name", optional_json(thread.name)}});
    }
    deadlocks.push_back({{"threads", std::move(members)}, {"description", cycle.text}});
  }
  document["deadlocks"] = std::move(deadlocks);
  nlohmann::json loops = nlohmann::json::array();
  for (const diagnosis::BlockedLoop& loop : diagnosis.blocked_loops) {
    const cpython::PythonThread& thread = stacks.threads[loop.thread];
    loops.push_back({{"thread_id", thread.thread_id},
                     {"native_thread_id", optional_json(thread.native_thread_id)},
                     {"task", loop.task},
                     {"description", loop.text}});
  }
  document["blocked_loops"] = std::move(loops);
  nlohmann::json chains = nlohmann::json::array();
  auto member = [&stacks](size_t index) {
    const cpython::PythonThread& thread = stacks.threads[index];
    return nlohmann::json{{"thread_id", thread.thread_id},
                          {"native_thread_id", optional_json(thread.native_thread_id)},
                          {"name", optional_json(thread.name)}};
  };
  for (const diagnosis::WaitChain& chain : diagnosis.chains) {
    nlohmann::json starts = nlohmann::json::array();
    for (size_t index : chain.starts) starts.push_back(member(index));
    nlohmann::json then = nlohmann::json::array();
    for (size_t index : chain.threads) then.push_back(member(index));
    chains.push_back({{"starts", std::move(starts)}, {"then", std::move(then)},
                      {"ends_outside", chain.ends_outside}, {"description", chain.text}});
  }
  document["wait_chains"] = std::move(chains);
  document["gil"] = diagnosis.no_gil ? "none (free-threaded)" : "used";
}

}  // namespace hangpy::report
