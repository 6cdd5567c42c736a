#include "jobs/collect_via.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "base/last_line.h"
#include "base/exit_codes.h"
#include "base/child_process.h"

namespace fs = std::filesystem;

namespace hangpy::jobs {
namespace {

constexpr size_t kMaxFilesBack = 20000;
constexpr std::chrono::seconds kStepLimit{60};

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream stream(text);
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

// `docker exec CTR` passes no stdin unless told (-i); the copy of coreanalyze comes through it.
std::vector<std::string> prefix_with_stdin(std::vector<std::string> prefix) {
  static const std::set<std::string> kRuntimes = {"docker", "podman", "nerdctl", "kubectl"};
  if (prefix.size() < 2 || !kRuntimes.contains(fs::path(prefix[0]).filename().string())) return prefix;
  auto exec = std::find(prefix.begin(), prefix.end(), "exec");
  if (exec == prefix.end()) return prefix;
  const bool has_stdin = std::any_of(prefix.begin(), prefix.end(), [](const std::string& word) {
    return word == "-i" || word == "--interactive" || word == "--stdin" ||
           (word.size() > 1 && word[0] == '-' && word[1] != '-' && word.find('i') != std::string::npos);
  });
  if (!has_stdin) prefix.insert(exec + 1, "-i");
  return prefix;
}

std::vector<std::string> inside(const std::vector<std::string>& prefix, std::vector<std::string> command) {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// A name the node's collector writes (PID.json, PID.snapshot.core, core.PID, manifest.json):
// letters, digits, '.', '_' and '-', not starting with '.'.
bool result_name(const std::string& name) {
  return !name.empty() && name.size() <= 128 && std::isalnum(static_cast<unsigned char>(name[0])) &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
         });
}

bool work_directory(const std::string& path) {
  constexpr std::string_view kStart = "/tmp/hangpy-collect.";
  return path.starts_with(kStart) && path.size() > kStart.size() && path.size() < 64 &&
         result_name(path.substr(kStart.size()));
}

void say(const std::string& what) { fmt::print(stderr, "coreanalyze collect: {}\n", what); }

std::string container_ptrace_hint() {
  return "reading processes inside a container needs CAP_SYS_PTRACE there: start it with "
         "`--cap-add SYS_PTRACE` (docker, podman), give the pod's container "
         "`securityContext: {capabilities: {add: [SYS_PTRACE]}}`, or attach a debug container "
         "that has it (`kubectl debug -it POD --target=C --profile=general`); or collect from the "
         "node: `coreanalyze collect --container ID`";
}

}  // namespace

std::string via_node_name(const std::string& via) {
  const std::vector<std::string> words = words_of(via);
  std::string name;
  // `kubectl exec POD -c C --`: the pod, the word after exec; `docker exec [options] CTR`: the
  // last word that is no option.
  auto exec = std::find(words.begin(), words.end(), "exec");
  if (!words.empty() && fs::path(words[0]).filename() == "kubectl" && exec != words.end() &&
      exec + 1 != words.end() && !(exec + 1)->starts_with('-'))
    name = *(exec + 1);
  for (auto word = words.rbegin(); word != words.rend() && name.empty(); ++word)
    if (!word->empty() && (*word)[0] != '-') name = *word;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  if (name.empty() || name == "." || name == "..") name = "container";
  return name.substr(0, 64);
}

int collect_via(const CollectOptions& options, const std::string& self) {
  const std::vector<std::string> prefix = prefix_with_stdin(words_of(*options.via));
  if (prefix.empty()) {
    say("--via wants a command that runs a program in the container ('podman exec CTR')");
    return kExitUsage;
  }
  const std::string shown = fmt::format("{}", fmt::join(prefix, " "));
  // 1. A directory of its own inside, and this coreanalyze in it unless the container has one.
  ChildResult made = run_child({inside(prefix, {"sh", "-c", "umask 077 && mktemp -d /tmp/hangpy-collect.XXXXXXXX"}),
                                std::nullopt, true}, kStepLimit);
  const std::string dir = without_line_end(made.output);
  if (!made.started || made.exit_code != 0 || !work_directory(dir)) {
    say(fmt::format("`{} sh -c 'mktemp -d ...'` failed: {}", shown,
                    !made.started ? made.start_error : made.exit_code != 0 ? without_line_end(made.errors) : "no directory named"));
    return kExitBadInput;
  }
  std::string binary = "coreanalyze";
  ChildResult found = run_child({inside(prefix, {binary, "--version"}), std::nullopt, true}, kStepLimit);
  ChildResult ours = run_child({{self, "--version"}, std::nullopt, true}, kStepLimit);
  if (found.exit_code != 0 || found.output != ours.output || options.remote_binary) {
    // Through stdin: the container may share no file system with this machine.
    binary = dir + "/coreanalyze";
    const std::string copy = fmt::format("cat > {0} && chmod 700 {0} && {0} --version", binary);
    ChildCommand command{inside(prefix, {"sh", "-c", copy}), std::nullopt, true};
    command.stdin_path = options.remote_binary.value_or(self);
    ChildResult copied = run_child(command, kStepLimit);
    if (copied.exit_code != 0) {
      say(fmt::format("coreanalyze could not be copied into the container and run there ({}): {}; a "
                      "static build (scripts/package's, the .deb's or the wheel's) runs in any "
                      "container, give it with --remote-binary", *command.stdin_path, without_line_end(copied.errors)));
      run_child({inside(prefix, {"rm", "-rf", dir}), std::nullopt, true}, kStepLimit);
      return kExitBadInput;
    }
    say(fmt::format("copied {} into the container as {}", *command.stdin_path, binary));
  }
  // 2. The collection, inside; its messages are shown as it goes.
  CollectOptions there = options;
  there.via.reset();
  there.remote_binary.reset();
  there.output_dir = dir + "/out";
  there.triage = false;
  std::vector<std::string> argv{binary};
  for (const std::string& word : collect_arguments(there)) argv.push_back(word);
  argv.push_back("--node-only");
  say(fmt::format("collecting inside the container through `{}`", shown));
  ChildResult collected = run_child({inside(prefix, argv), std::nullopt, false},
                                    std::chrono::seconds(options.timeout_seconds * 20 + 120));
  if (collected.exit_code == kExitNotPermitted) say(container_ptrace_hint());
  // 3. The results back, file by file.
  const fs::path node_dir = fs::path(options.output_dir) / options.node_name;
  std::error_code error;
  fs::create_directories(node_dir, error);
  const std::string remote_node = there.output_dir + "/" + options.node_name;
  ChildResult listed = run_child({inside(prefix, {"ls", "-1", remote_node}), std::nullopt, true}, kStepLimit);
  size_t copied = 0, refused = 0;
  std::istringstream names(listed.output);
  for (std::string name; std::getline(names, name) && copied + refused < kMaxFilesBack;) {
    if (!result_name(name)) {
      ++refused;
      continue;
    }
    ChildResult file = run_child({inside(prefix, {"cat", remote_node + "/" + name}), (node_dir / name).string(), true},
                                 std::chrono::seconds(options.timeout_seconds * 10));
    if (file.exit_code == 0) ++copied;
    else say(fmt::format("{}: not copied back: {}", name, without_line_end(file.errors)));
  }
  if (refused > 0) say(fmt::format("{} file name(s) in the container's result directory left there: not names the collector writes", refused));
  run_child({inside(prefix, {"rm", "-rf", dir}), std::nullopt, true}, kStepLimit);
  say(fmt::format("{} file(s) copied back into {}", copied, node_dir.string()));
  // Nothing back: the collection's own failure, or no result at all.
  if (copied == 0 && collected.exit_code == kExitSuccess) return kExitBadInput;
  return collected.exit_code;
}

}  // namespace hangpy::jobs
