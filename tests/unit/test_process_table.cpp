// How `coreanalyze collect` picks a job's processes (jobs/process_table.h): the tree walks
// over a table, and /proc read for a real child of this test.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <gtest/gtest.h>

#include "jobs/process_table.h"

namespace hangpy::jobs {
namespace {

ProcessEntry entry(int pid, int ppid, std::vector<std::string> argv, char state = 'S') {
  ProcessEntry process;
  process.pid = pid;
  process.ppid = ppid;
  process.state = state;
  process.argv = std::move(argv);
  process.comm = process.argv.empty() ? "kworker" : process.argv.front();
  return process;
}

// torchrun (10) with two ranks (11, 12), rank 12 with a spawned worker (13); an unrelated python
// (20); the shell (5) that ran the collector (6), whose command line holds the pattern too.
std::map<int, ProcessEntry> job_table() {
  std::map<int, ProcessEntry> table;
  for (auto process : {entry(1, 0, {"init"}), entry(5, 1, {"bash"}),
                       entry(6, 5, {"coreanalyze", "collect", "--name", "train.py"}),
                       entry(10, 5, {"/usr/bin/python3", "/usr/bin/torchrun", "train.py"}),
                       entry(11, 10, {"/usr/bin/python3", "-u", "train.py"}),
                       entry(12, 10, {"/usr/bin/python3", "-u", "train.py"}),
                       entry(13, 12, {"/usr/bin/python3", "-c", "from multiprocessing.spawn import spawn_main"}),
                       entry(14, 10, {}, 'Z'), entry(20, 1, {"python3", "other.py"})})
    table.emplace(process.pid, process);
  return table;
}

TEST(ProcessTable, TreeIsTheRootAndEveryDescendantParentsFirst) {
  EXPECT_EQ(process_tree(job_table(), 10), (std::vector<int>{10, 11, 12, 14, 13}));
  EXPECT_EQ(process_tree(job_table(), 13), (std::vector<int>{13}));
  EXPECT_TRUE(process_tree(job_table(), 99).empty());
}

TEST(ProcessTable, NamedProcessesBringTheirDescendants) {
  // 13's command line does not hold the name: it is found as 12's child. The collector (6)
  // matches too; collect leaves it and its ancestors out (collect_node.cpp).
  EXPECT_EQ(processes_named(job_table(), "train.py"), (std::vector<int>{6, 10, 11, 12, 14, 13}));
  EXPECT_EQ(processes_named(job_table(), "other.py"), (std::vector<int>{20}));
}

TEST(ProcessTable, AncestorsNearestFirstAndACycleEnds) {
  EXPECT_EQ(ancestors(job_table(), 13), (std::vector<int>{12, 10, 5, 1}));
  auto table = job_table();
  table[1].ppid = 13;  // impossible in /proc, but the walk must end
  EXPECT_EQ(ancestors(table, 13), (std::vector<int>{12, 10, 5, 1}));
}

TEST(ProcessTable, SlurmJobFromTheEnvironment) {
  auto table = job_table();
  table[11].slurm_job_id = "42";
  table[12].slurm_job_id = "42";
  table[20].slurm_job_id = "7";
  EXPECT_EQ(processes_of_slurm_job(table, "42"), (std::vector<int>{11, 12}));
}

TEST(ProcessTable, ReadsARealChildWithAnAwkwardName) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    prctl(PR_SET_NAME, "a) b (c", 0, 0, 0);  // /proc/PID/stat: "PID (a) b (c) S PPID ..."
    if (write(ready[1], "x", 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  auto process = read_process(child);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  ASSERT_TRUE(process.has_value());
  EXPECT_EQ(process->ppid, getpid());
  EXPECT_EQ(process->comm, "a) b (c");
  EXPECT_FALSE(process->zombie());
  EXPECT_FALSE(read_process(child).has_value());
}

TEST(ProcessTable, LabelsAndSlurmJobFromTheInitialEnvironment) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
    char* envp[] = {const_cast<char*>("RANK=3"), const_cast<char*>("WORLD_SIZE=8"),
                    const_cast<char*>("SLURM_JOB_ID=1234"), const_cast<char*>("OTHER=x"), nullptr};
    execve("/bin/sleep", argv, envp);
    _exit(127);
  }
  std::optional<ProcessEntry> process;
  // Until the exec is done (up to 5 s). The kernel names the task before it lays out the new
  // argv and environment, so comm alone can read "sleep" while cmdline is still empty.
  for (int tries = 0; tries < 500; ++tries) {
    process = read_process(child);
    if (process && process->comm == "sleep" && !process->argv.empty() && !process->labels.empty()) break;
    usleep(10000);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(process.has_value());
  EXPECT_EQ(process->labels, (std::map<std::string, std::string>{{"RANK", "3"}, {"WORLD_SIZE", "8"}}));
  EXPECT_EQ(process->slurm_job_id, std::optional<std::string>("1234"));
  EXPECT_FALSE(process->runs_python);
  EXPECT_EQ(process->argv, (std::vector<std::string>{"sleep", "30"}));
}

}  // namespace
}  // namespace hangpy::jobs
