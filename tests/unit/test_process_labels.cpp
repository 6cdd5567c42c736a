// Process labels: the whitelisted environment, the numeric labels, the host and the role
// (report/process_labels.h, report/process_role.h), and the initial stack's environment reader
// (targets/initial_environment.h) on synthetic stacks, for its bounds and malformed input.
// Real processes and cores are in tests/integration/test_labels.py.
#include <elf.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "targets/initial_environment.h"
#include "memory_image.h"
#include "report/process_labels.h"
#include "report/process_role.h"

namespace hangpy::report {
namespace {

TEST(ProcessLabels, KeepsOnlyWhitelistedVariablesOfNulAndLineSeparatedText) {
  const char block[] = "RANK=3\0API_TOKEN=hunter2\0WORLD_SIZE=8\0=bad\0noequals\0LOCAL_RANK=1\0";
  const std::string environ_text(block, sizeof block - 1);
  cpython::Environment variables = cpython::label_variables_of_text(environ_text);
  EXPECT_EQ(variables, (cpython::Environment{{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}}));
  variables = cpython::label_variables_of_text("LANG=C.UTF-8\nSLURM_PROCID=5\nAWS_SECRET_ACCESS_KEY=x\nSLURM_PROCID=6\n");
  EXPECT_EQ(variables, (cpython::Environment{{"SLURM_PROCID", "6"}}));  // the later one wins, as getenv
  EXPECT_FALSE(cpython::is_label_variable("PATH"));
  EXPECT_FALSE(cpython::is_label_variable("RANKX"));
  EXPECT_TRUE(cpython::is_label_variable("CUDA_VISIBLE_DEVICES"));
}

TEST(ProcessLabels, NumericLabelsAreDecimalAndFallBackToMpiNames) {
  auto labels = numeric_labels({{"RANK", "3"}, {"WORLD_SIZE", "x8"}, {"OMPI_COMM_WORLD_SIZE", "16"},
                                {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"SLURM_JOB_ID", "4711"},
                                {"SLURM_PROCID", ""}});
  std::map<std::string, std::optional<int64_t>> by_name(labels.begin(), labels.end());
  EXPECT_EQ(by_name["rank"], 3);
  EXPECT_EQ(by_name["world_size"], 16);  // WORLD_SIZE is no number
  EXPECT_EQ(by_name["local_rank"], 2);
  EXPECT_EQ(by_name["slurm_job_id"], 4711);
  EXPECT_EQ(by_name["slurm_procid"], std::nullopt);
  EXPECT_EQ(labels.size(), 9u);
}

TEST(ProcessLabels, HostPrefersSlurmNodeThenSystemThenHostname) {
  cpython::ProcessEnvironment environment;
  EXPECT_EQ(host_of(environment), std::nullopt);
  environment.variables = {{"HOSTNAME", "container"}};
  EXPECT_EQ(host_of(environment), "container");
  environment.system_host = "node7";
  EXPECT_EQ(host_of(environment), "node7");
  environment.variables["SLURMD_NODENAME"] = "gpu-12";
  EXPECT_EQ(host_of(environment), "gpu-12");
}

TEST(ProcessLabels, TextLineAndJsonNeverShowOtherVariables) {
  cpython::ProcessInfo process;
  process.pid = 1234;
  process.parent_pid = 1200;
  process.arguments = "python3 train.py";
  cpython::ProcessEnvironment environment;
  environment.variables = {{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}};
  environment.variables["API_TOKEN"] = "hunter2";  // not through cpython::keep_label_variables: still dropped
  environment.system_host = "node7";
  environment.source = "initial stack";
  EXPECT_EQ(format_process_labels(process, environment, nullptr),
            "Role: training rank (rank 3 of 8, local rank 1), host node7\n");
  nlohmann::json json;
  add_process_labels(json, process, environment, nullptr);
  EXPECT_EQ(json["ppid"], 1200);
  EXPECT_EQ(json["host"], "node7");
  EXPECT_EQ(json["role"], "training rank");
  EXPECT_EQ(json["labels"]["rank"], 3);
  EXPECT_EQ(json["labels"]["world_size"], 8);
  EXPECT_TRUE(json["labels"]["slurm_procid"].is_null());
  EXPECT_FALSE(json["environment"].contains("API_TOKEN"));
  EXPECT_EQ(json["environment"]["RANK"], "3");
  EXPECT_EQ(json["environment_source"], "initial stack");
}

cpython::ProcessStacks stacks_running(std::vector<std::pair<std::string, std::string>> frames) {
  cpython::ProcessStacks stacks;
  cpython::PythonThread thread;
  for (auto& [file, function] : frames) {
    cpython::PythonFrame frame;
    frame.file = file;
    frame.function = function;
    thread.frames.push_back(frame);
  }
  stacks.threads.push_back(thread);
  return stacks;
}

std::string_view role(std::string_view arguments, const cpython::Environment& environment = {},
                      const cpython::ProcessStacks* stacks = nullptr, std::string_view command = "python3",
                      std::string_view executable = "/usr/bin/python3.11") {
  RoleEvidence evidence;
  evidence.command = command;
  evidence.arguments = arguments;
  evidence.executable = executable;
  evidence.environment = &environment;
  evidence.stacks = stacks;
  return role_name(classify_process(evidence));
}

TEST(ProcessRole, FromCommandLines) {
  EXPECT_EQ(role("/usr/bin/python3 /usr/local/bin/torchrun --nproc-per-node 4 train.py"), "elastic agent");
  EXPECT_EQ(role("python3 -m torch.distributed.run --nnodes 2 train.py"), "elastic agent");
  EXPECT_EQ(role("python3 train.py --note torchrun"), "process");  // the script's own arguments
  EXPECT_EQ(role("/usr/lib/python3/dist-packages/torch/bin/torch_shm_manager", {}, nullptr,
                 "torch_shm_manag", "/usr/lib/python3/dist-packages/torch/bin/torch_shm_manager"),
            "torch_shm_manager");
  EXPECT_EQ(role("/usr/bin/python3.11 -c from multiprocessing.resource_tracker import main;main(6)",
                 {{"RANK", "0"}}),
            "resource_tracker");
  EXPECT_EQ(role("gunicorn: master [app:app]"), "gunicorn arbiter");
  EXPECT_EQ(role("gunicorn: worker [app:app]"), "gunicorn worker");
  EXPECT_EQ(role("/usr/bin/python3.11 -c from multiprocessing.spawn import spawn_main; "
                 "spawn_main(tracker_fd=5, pipe_handle=7) --multiprocessing-fork"),
            "child");
  EXPECT_EQ(role("python3 train.py", {{"SLURM_PROCID", "2"}}), "training rank");
  EXPECT_EQ(role("python3 train.py", {{"OMPI_COMM_WORLD_RANK", "2"}}), "training rank");
  EXPECT_EQ(role("python3 serve.py"), "process");
}

TEST(ProcessRole, FromStacksBeforeTheInheritedEnvironment) {
  const cpython::Environment rank = {{"RANK", "1"}, {"WORLD_SIZE", "2"}};
  const auto worker = stacks_running({{"/srv/train.py", "<module>"},
                                      {"/usr/lib/python3.11/multiprocessing/popen_fork.py", "_launch"},
                                      {"/usr/lib/python3.11/multiprocessing/process.py", "_bootstrap"},
                                      {"/usr/lib/python3/dist-packages/torch/utils/data/_utils/worker.py", "_worker_loop"}});
  EXPECT_EQ(role("python3 train.py", rank, &worker), "DataLoader worker");
  const auto forked = stacks_running({{"/srv/train.py", "<module>"},
                                      {"/usr/lib/python3/dist-packages/torch/multiprocessing/spawn.py", "_wrap"},
                                      {"/usr/lib/python3.11/multiprocessing/popen_fork.py", "_launch"},
                                      {"/usr/lib/python3.11/multiprocessing/process.py", "_bootstrap"}});
  EXPECT_EQ(role("python3 train.py", rank, &forked), "child");
  const auto spawned = stacks_running({{"<string>", "<module>"},
                                       {"/usr/lib/python3.11/multiprocessing/spawn.py", "spawn_main"},
                                       {"/usr/lib/python3.11/multiprocessing/process.py", "_bootstrap"},
                                       {"/usr/lib/python3/dist-packages/torch/multiprocessing/spawn.py", "_wrap"}});
  EXPECT_EQ(role("python3 -c from multiprocessing.spawn import spawn_main", {}, &spawned), "training rank");
  const auto tracker = stacks_running({{"/usr/lib/python3.11/multiprocessing/resource_tracker.py", "main"}});
  EXPECT_EQ(role("python3 x.py", rank, &tracker), "resource_tracker");
  const auto agent = stacks_running({{"/usr/local/bin/torchrun", "<module>"},
                                     {"/usr/lib/python3/dist-packages/torch/distributed/elastic/agent/server/api.py", "run"}});
  EXPECT_EQ(role("python3 launcher.py", {{"SLURM_PROCID", "0"}}, &agent), "elastic agent");
  const auto arbiter = stacks_running({{"/venv/lib/python3.11/site-packages/gunicorn/arbiter.py", "run"},
                                       {"/venv/lib/python3.11/site-packages/gunicorn/arbiter.py", "sleep"}});
  EXPECT_EQ(role("/venv/bin/python /venv/bin/gunicorn app:app", {}, &arbiter), "gunicorn arbiter");
  const auto gunicorn_worker = stacks_running({{"/venv/lib/python3.11/site-packages/gunicorn/arbiter.py", "spawn_worker"},
                                               {"/venv/lib/python3.11/site-packages/gunicorn/workers/sync.py", "run"}});
  EXPECT_EQ(role("/venv/bin/python /venv/bin/gunicorn app:app", {}, &gunicorn_worker), "gunicorn worker");
}

}  // namespace
}  // namespace hangpy::report

namespace hangpy::targets {
namespace {

constexpr uint64_t kStackLow = 0x7ffc00000000;
constexpr uint64_t kLabelledStackSize = 0x20000;

// A stack laid out as the kernel does at exec (fs/binfmt_elf.c create_elf_tables), the strings
// at the top; returns the auxv to give the reader.
struct InitialStack {
  test_support::MemoryImage memory;
  std::vector<std::pair<uint64_t, uint64_t>> auxv;
  uint64_t argc_address = 0;
  std::vector<uint64_t> environment_pointers;

  // `auxv_at`: where the auxv goes instead of just below the strings (the strings must stay above
  // its end).
  InitialStack(const std::vector<std::string>& argv, const std::vector<std::string>& envp,
               std::optional<uint64_t> auxv_at = std::nullopt) {
    memory.map(kStackLow, kLabelledStackSize);
    uint64_t top = kStackLow + kLabelledStackSize - 8;
    auto push_string = [&](const std::string& text) {
      top -= text.size() + 1;
      memory.put_string(top, text);
      return top;
    };
    const uint64_t execfn = push_string("/usr/bin/python3.11");
    std::vector<uint64_t> env_pointers(envp.size()), arg_pointers(argv.size());
    for (size_t i = envp.size(); i-- > 0;) env_pointers[i] = push_string(envp[i]);
    for (size_t i = argv.size(); i-- > 0;) arg_pointers[i] = push_string(argv[i]);
    environment_pointers = env_pointers;
    auxv = {{AT_SYSINFO_EHDR, 0x7ffc1234a000}, {AT_HWCAP, 0x178bfbff}, {AT_PAGESZ, 4096},
            {AT_CLKTCK, 100}, {AT_PHDR, 0x400040}, {AT_EXECFN, execfn}, {AT_PLATFORM, top - 16}};
    uint64_t at = (top - 64) & ~uint64_t{15};
    at -= 16 * (auxv.size() + 1);
    if (auxv_at) at = *auxv_at;
    const uint64_t auxv_address = at;
    for (const auto& [key, value] : auxv) {
      memory.put<uint64_t>(at, key);
      memory.put<uint64_t>(at + 8, value);
      at += 16;
    }
    at = auxv_address - 8;  // envp's NULL
    for (size_t i = env_pointers.size(); i-- > 0;) memory.put<uint64_t>(at -= 8, env_pointers[i]);
    at -= 8;  // argv's NULL
    for (size_t i = arg_pointers.size(); i-- > 0;) memory.put<uint64_t>(at -= 8, arg_pointers[i]);
    argc_address = at - 8;
    memory.put<uint64_t>(argc_address, argv.size());
  }
};

const KeepVariable kKeepLabels = [](std::string_view name) { return cpython::is_label_variable(name); };

TEST(InitialEnvironment, ReadsTheKeptEntriesInOrder) {
  InitialStack stack({"python3", "train.py"},
                     {"PATH=/usr/bin", "RANK=3", "API_TOKEN=hunter2", "WORLD_SIZE=8", "HOME=/root"});
  auto entries = read_initial_environment(stack.memory, stack.auxv, kKeepLabels);
  ASSERT_TRUE(entries) << entries.error().describe();
  EXPECT_EQ(*entries, (std::vector<std::string>{"RANK=3", "WORLD_SIZE=8"}));
}

// Seen on a real 3.13 kernel core: the auxv 8 bytes into AT_EXECFN's page, so the first window
// (that page) held it but not envp, which lies in the page below.
TEST(InitialEnvironment, ArraysInThePageBelowTheAuxvAreRead) {
  const uint64_t execfn_page = (kStackLow + kLabelledStackSize - 1) & ~uint64_t{4095};
  InitialStack stack({"python3", "train.py"}, {"PATH=/usr/bin", "RANK=3", "WORLD_SIZE=8"},
                     execfn_page + 8);
  auto entries = read_initial_environment(stack.memory, stack.auxv, kKeepLabels);
  ASSERT_TRUE(entries) << entries.error().describe();
  EXPECT_EQ(*entries, (std::vector<std::string>{"RANK=3", "WORLD_SIZE=8"}));
}

TEST(InitialEnvironment, AWrongArgcIsMalformed) {
  InitialStack stack({"python3", "train.py"}, {"RANK=3"});
  stack.memory.put<uint64_t>(stack.argc_address, 7);
  auto entries = read_initial_environment(stack.memory, stack.auxv, kKeepLabels);
  ASSERT_FALSE(entries);
  EXPECT_EQ(entries.error().kind, ErrorKind::kCorrupt);
}

TEST(InitialEnvironment, OverwrittenStringsAreReportedNotReturned) {
  InitialStack stack({"python3", "app.py"}, {"RANK=3", "WORLD_SIZE=8"});
  stack.memory.put_string(stack.environment_pointers[0], "");  // setproctitle zeroes the area
  auto entries = read_initial_environment(stack.memory, stack.auxv, kKeepLabels);
  ASSERT_FALSE(entries);
  EXPECT_EQ(entries.error().kind, ErrorKind::kCorrupt);
}

TEST(InitialEnvironment, NoAuxvOnTheStackOrNoExecfnIsNotFound) {
  InitialStack stack({"python3"}, {"RANK=3"});
  auto other_auxv = stack.auxv;
  other_auxv[0].second += 0x1000;  // not what the stack holds
  auto entries = read_initial_environment(stack.memory, other_auxv, kKeepLabels);
  ASSERT_FALSE(entries);
  EXPECT_EQ(entries.error().kind, ErrorKind::kNotFound);
  other_auxv = {{AT_PAGESZ, 4096}};
  EXPECT_FALSE(read_initial_environment(stack.memory, other_auxv, kKeepLabels));
  EXPECT_FALSE(read_initial_environment(stack.memory, {}, kKeepLabels));
}

TEST(InitialEnvironment, AnExecfnOutsideMemoryIsNotFound) {
  InitialStack stack({"python3"}, {"RANK=3"});
  auto auxv = stack.auxv;
  for (auto& [key, value] : auxv)
    if (key == AT_EXECFN) value = 0x1000;
  EXPECT_FALSE(read_initial_environment(stack.memory, auxv, kKeepLabels));
}

TEST(EnvironmentArray, ReadsKeptEntriesAndStopsAtItsBound) {
  test_support::MemoryImage memory;
  memory.map(0x10000, 0x1000);
  memory.put_string(0x10800, "RANK=5");
  memory.put_string(0x10900, "API_TOKEN=hunter2");
  memory.put<uint64_t>(0x10000, 0x10100);  // environ -> array
  memory.put<uint64_t>(0x10100, 0x10800);
  memory.put<uint64_t>(0x10108, 0x10900);
  auto entries = read_environment_array(memory, 0x10000, kKeepLabels);
  ASSERT_TRUE(entries);
  EXPECT_EQ(*entries, std::vector<std::string>{"RANK=5"});
  // An array without its NULL runs into unmapped memory: an error, not a crash.
  for (uint64_t at = 0x10100; at < 0x11000; at += 8) memory.put<uint64_t>(at, 0x10800);
  EXPECT_FALSE(read_environment_array(memory, 0x10000, kKeepLabels));
}

}  // namespace
}  // namespace hangpy::targets
