#include "report/process_facts.h"

#include <signal.h>
#include <string.h>

#include <cctype>
#include <iterator>

#include <fmt/format.h>

namespace hangpy::report {
namespace {

// The si_codes a process sends with (asm-generic/siginfo.h): which call sent the signal.
std::string sending_call(int code) {
  switch (code) {
    case SI_USER: return "kill()";
    case SI_TKILL: return "tgkill()";
    case SI_QUEUE: return "sigqueue()";
    case SI_TIMER: return "a POSIX timer";
    case SI_MESGQ: return "a message queue";
    case SI_ASYNCIO: return "asynchronous I/O";
    case SI_SIGIO: return "SIGIO";
    default: return fmt::format("si_code {}", code);
  }
}

// Why the kernel raised a fault signal, for the codes users meet.
std::string fault_reason(int number, int code) {
  if (number == SIGSEGV && code == SEGV_MAPERR) return "address not mapped";
  if (number == SIGSEGV && code == SEGV_ACCERR) return "access not permitted";
  if (number == SIGBUS && code == BUS_ADRERR) return "no such physical address";
  if (number == SIGBUS && code == BUS_ADRALN) return "misaligned address";
  if (number == SIGFPE && code == FPE_INTDIV) return "integer divide by zero";
  if (number == SIGILL && code == ILL_ILLOPN) return "illegal operand";
  if (number == SIGILL && code == ILL_ILLOPC) return "illegal opcode";
  return fmt::format("si_code {}", code);
}

// The thread running Py_Finalize, as "thread 0x... (LWP N)" where the stacks list it.
std::string finalizing_thread(const cpython::ProcessStacks& stacks) {
  for (const cpython::PythonThread& thread : stacks.threads) {
    if (thread.thread_state != stacks.finalizing_thread_state) continue;
    std::string text = fmt::format("thread 0x{:x}", thread.thread_id);
    if (thread.native_thread_id) text += fmt::format(" (LWP {})", *thread.native_thread_id);
    return text;
  }
  return fmt::format("thread state 0x{:x}", stacks.finalizing_thread_state);
}

}  // namespace

std::string signal_name(int number) {
  // Linux's numbering (the target's, which is what a core records), written out rather than asked
  // of glibc's sigabbrev_np: that call is glibc 2.32's, and the portable build runs on older ones.
  static constexpr const char* kNames[] = {
      nullptr, "HUP",  "INT",  "QUIT", "ILL",    "TRAP", "ABRT",  "BUS",  "FPE",  "KILL", "USR1",
      "SEGV",  "USR2", "PIPE", "ALRM", "TERM",   "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN",
      "TTOU",  "URG",  "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO",   "PWR",  "SYS"};
  if (number > 0 && number < static_cast<int>(std::size(kNames))) {
    return fmt::format("SIG{}", kNames[number]);
  }
  return fmt::format("signal {}", number);
}

std::string describe_signal(const cpython::SignalInfo& signal) {
  std::string text = fmt::format("{} ({})", signal_name(signal.number), signal.number);
  if (signal.sender_pid) {
    text += fmt::format(", sent by {} from PID {}", sending_call(signal.code), *signal.sender_pid);
    if (signal.sender_uid) text += fmt::format(" (UID {})", *signal.sender_uid);
  } else if (signal.fault_address) {
    text += fmt::format(", fault at 0x{:x} ({})", *signal.fault_address,
                        fault_reason(signal.number, signal.code));
  } else if (signal.code == SI_KERNEL) {
    text += ", sent by the kernel";
  }
  return text;
}

std::string format_process_facts(const cpython::ProcessInfo& process,
                                 const cpython::ProcessStacks& stacks) {
  std::vector<std::string> parts;
  if (process.parent_pid) parts.push_back(fmt::format("parent PID {}", *process.parent_pid));
  if (process.uid) parts.push_back(fmt::format("UID {}", *process.uid));
  if (process.gid) parts.push_back(fmt::format("GID {}", *process.gid));
  // State t is a tracing stop: a debugger held the process when the core was written. With a
  // SIGSTOP as the core's signal, that stop is the debugger's attach (gdb's gcore records it),
  // not something the program received; whether the program was stopped before, the core
  // cannot tell.
  const int signal_number = process.signal_info ? process.signal_info->number
                                                 : process.signal.value_or(0);
  if (process.state == 't' && signal_number == SIGSTOP) {
    parts.push_back("state t (traced): stopped by the debugger that wrote this core, whose "
                    "SIGSTOP is its attach, not the program's");
  } else {
    if (process.state) parts.push_back(fmt::format("state {}", *process.state));
    if (process.signal_info) {
      parts.push_back("signal " + describe_signal(*process.signal_info));
    } else if (process.signal) {
      parts.push_back(fmt::format("signal {} ({})", signal_name(*process.signal), *process.signal));
    }
  }
  std::string text;
  if (!parts.empty()) {
    text = parts.front();
    for (size_t i = 1; i < parts.size(); ++i) text += ", " + parts[i];
    text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    text += "\n";
  }
  if (stacks.finalizing == true) {
    text += fmt::format("The interpreter is finalizing (shutting down): Py_Finalize runs in {}\n",
                        finalizing_thread(stacks));
  }
  return text;
}

void add_process_facts(nlohmann::json& process_json, const cpython::ProcessInfo& process,
                       const cpython::ProcessStacks& stacks) {
  auto optional_json = [](const auto& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  process_json["parent_pid"] = optional_json(process.parent_pid);
  // Only where the target knows its descriptors: a triage matches pipes' ends across processes.
  if (!process.pipe_ends.empty()) {
    nlohmann::json ends = nlohmann::json::array();
    for (const cpython::PipeEnd& end : process.pipe_ends)
      ends.push_back({{"fd", end.fd}, {"inode", end.inode}, {"end", end.read_end ? "read" : "write"}});
    process_json["pipe_ends"] = std::move(ends);
  }
  if (!process.socket_ends.empty()) {
    nlohmann::json ends = nlohmann::json::array();
    for (const cpython::SocketEnd& end : process.socket_ends)
      ends.push_back({{"fd", end.fd}, {"local", end.local}, {"remote", end.remote}});
    process_json["socket_ends"] = std::move(ends);
  }
  // Its own PID in its PID namespace where that is not the reader's (a container's process); the
  // children's are in its threads' blocked_on.child_namespace_pid.
  if (!process.namespace_pids.empty() && process.namespace_pids.front().pid == process.pid)
    process_json["namespace_pid"] = process.namespace_pids.front().namespace_pid;
  process_json["uid"] = optional_json(process.uid);
  process_json["gid"] = optional_json(process.gid);
  process_json["state"] =
      process.state ? nlohmann::json(std::string(1, *process.state)) : nlohmann::json(nullptr);
  nlohmann::json signal = nullptr;
  if (const auto& info = process.signal_info) {
    signal = {
        {"number", info->number},
        {"name", signal_name(info->number)},
        {"code", info->code},
        {"sender_pid", optional_json(info->sender_pid)},
        {"sender_uid", optional_json(info->sender_uid)},
        {"fault_address", info->fault_address ? nlohmann::json(fmt::format("0x{:x}", *info->fault_address))
                                              : nlohmann::json(nullptr)},
        {"description", describe_signal(*info)},
    };
  }
  process_json["signal_info"] = std::move(signal);
  process_json["finalizing"] = optional_json(stacks.finalizing);
  nlohmann::json thread = nullptr;
  if (stacks.finalizing == true) {
    thread = {{"thread_state", fmt::format("0x{:x}", stacks.finalizing_thread_state)},
              {"native_thread_id", nullptr}};
    for (const cpython::PythonThread& t : stacks.threads)
      if (t.thread_state == stacks.finalizing_thread_state)
        thread["native_thread_id"] = optional_json(t.native_thread_id);
  }
  process_json["finalizing_thread"] = std::move(thread);
}

}  // namespace hangpy::report
