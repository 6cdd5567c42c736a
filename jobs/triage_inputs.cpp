#include "jobs/triage_inputs.h"
#include "triage/process_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <fstream>
#include <set>
#include <span>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "inputs/input_format.h"

namespace hangpy::jobs {
using namespace ::hangpy::inputs;
namespace {

namespace fs = std::filesystem;

// How much of a file's start tells a JSON document from a core: the first byte that is not white
// space (a JSON document starts with an object or an array after optional white space, RFC 8259;
// a core with a magic number).
constexpr size_t kJsonProbeBytes = 4096;

bool starts_like_json(std::string_view head) {
  for (char c : head) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{' || c == '[';
  }
  return false;
}

// Up to kJsonProbeBytes of a file's start; nullopt when it cannot be opened or read (the reader
// of the input says why, later).
std::optional<std::string> file_head(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  std::string head(kJsonProbeBytes, '\0');
  ssize_t got;
  do {
    got = pread(fd, head.data(), head.size(), 0);
  } while (got < 0 && errno == EINTR);
  close(fd);
  if (got < 0) return std::nullopt;
  head.resize(static_cast<size_t>(got));
  return head;
}

enum class FileKind { kJson, kCore, kNeither, kAsk };  // kAsk: not a file read here

// What each file a directory listing found is, by one read of its start (10,000 rank results
// cost 10,000 opens, not 20,000 and as many stats), on a few threads: the opens are most of a
// large triage's time before its analyses start. Directories (an ABRT problem directory) and
// files that cannot be read are kAsk: inputs_of_path says what they are, or what is wrong.
std::vector<FileKind> kinds_of_listed(const std::vector<std::string>& files) {
  std::vector<FileKind> kinds(files.size(), FileKind::kAsk);
  auto classify = [&](size_t first, size_t step) {
    for (size_t i = first; i < files.size(); i += step) {
      auto head = file_head(files[i]);
      if (!head) continue;
      if (starts_like_json(*head)) {
        kinds[i] = FileKind::kJson;
        continue;
      }
      const auto start = std::as_bytes(std::span(head->data(), std::min(head->size(), kFormatProbeBytes)));
      kinds[i] = format_of_file_start(start) == InputFormat::kUnknown ? FileKind::kNeither : FileKind::kCore;
    }
  };
  constexpr size_t kFilesPerThread = 256;
  const size_t threads = std::clamp<size_t>(files.size() / kFilesPerThread, 1,
                                            std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) workers.emplace_back(classify, t, threads);
  classify(0, threads);
  for (std::thread& worker : workers) worker.join();
  return kinds;
}

bool looks_like_json(const std::string& path) {
  auto head = file_head(path);
  return head && starts_like_json(*head);
}

// `coreanalyze collect` writes DIR/manifest.json ("nodes") and DIR/NODE/manifest.json
// ("collector_pid", "processes"): descriptions of the collection, not stacks of a process.
// Returns the parsed manifest when `path` is one of them.
std::optional<nlohmann::json> collector_manifest(const fs::path& path) {
  if (path.filename() != "manifest.json") return std::nullopt;
  std::ifstream file(path);
  size_t cut = 0;
  nlohmann::json document = triage::parse_bounded_json(file, cut);
  if (!document.is_object() || document.contains("threads")) return std::nullopt;
  if (document.contains("nodes") || document.contains("collector_pid")) return document;
  return std::nullopt;
}

// With --cores snapshot or full, a node's directory holds a JSON result and a core of each
// process: the same process twice. The cores whose process has a JSON result are left out (the
// JSON is the same analysis, and already made); a core given by name is always read.
void drop_cores_with_json(const std::vector<std::string>& files, std::vector<std::string>& kept,
                          std::vector<std::string>& notes) {
  std::set<std::string> dropped;
  size_t manifests = 0;
  for (const std::string& file : files) {
    auto manifest = collector_manifest(file);
    if (!manifest) continue;
    dropped.insert(file);
    ++manifests;
    const auto processes = manifest->find("processes");
    if (processes == manifest->end() || !processes->is_array()) continue;
    const fs::path node_dir = fs::path(file).parent_path();
    for (const nlohmann::json& process : *processes) {
      const auto json = process.find("json");
      const auto core = process.find("core");
      if (json == process.end() || core == process.end() || !json->is_string() || !core->is_string())
        continue;
      if (fs::exists(node_dir / json->get<std::string>()))
        dropped.insert((node_dir / core->get<std::string>()).string());
    }
  }
  for (const std::string& file : files)
    if (!dropped.count(file)) kept.push_back(file);
  const size_t cores = dropped.size() - manifests;
  if (cores > 0)
    notes.push_back(fmt::format("{} core(s) not read: the JSON results of the same processes were "
                                "(name the cores to read them instead)", cores));
}

// What collect and watch write into a directory beside the results (the verdict, the looks taken
// before a capture): no inputs, and no note that they were skipped.
bool is_written_beside_inputs(const fs::path& file) {
  static const std::set<std::string> kNames{"triage.txt", "triage.html", "triage.svg", "triage.dot",
                                            "looks.jsonl", "watch.txt"};
  return kNames.contains(file.filename().string());
}

Expected<std::vector<TriageInput>> inputs_of_path(const std::string& path, bool in_directory,
                                                  std::vector<std::string>& notes) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error) return make_error(ErrorKind::kIo, fmt::format("{}: {}", path, error.message()));
  auto format = format_of_path(path);
  if (!format) return std::unexpected(format.error());
  if (*format == InputFormat::kAbrtDirectory) return std::vector<TriageInput>{{TriageInput::Kind::kCore, path, 0, path}};
  if (fs::is_directory(status)) {
    std::vector<std::string> files;
    for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, error), end;
         !error && it != end; it.increment(error)) {
      if (it->is_directory()) {
        // A hidden directory holds no results of the collection: `watch` keeps its looks there.
        if (it->path().filename().string().starts_with(".")) {
          it.disable_recursion_pending();
          continue;
        }
        // An ABRT problem directory inside is one core: its files are no inputs of their own.
        auto inner = format_of_path(it->path().string());
        if (inner && *inner == InputFormat::kAbrtDirectory) {
          files.push_back(it->path().string());
          it.disable_recursion_pending();
        }
        continue;
      }
      if (it->is_regular_file() && !is_written_beside_inputs(it->path())) files.push_back(it->path().string());
    }
    if (error) return make_error(ErrorKind::kIo, fmt::format("{}: {}", path, error.message()));
    std::sort(files.begin(), files.end());
    std::vector<std::string> kept;
    drop_cores_with_json(files, kept, notes);
    const std::vector<FileKind> kinds = kinds_of_listed(kept);
    std::vector<TriageInput> inputs;
    for (size_t i = 0; i < kept.size(); ++i) {
      const std::string& file = kept[i];
      if (kinds[i] == FileKind::kJson || kinds[i] == FileKind::kCore) {
        inputs.push_back({kinds[i] == FileKind::kJson ? TriageInput::Kind::kJson : TriageInput::Kind::kCore, file, 0, file});
        continue;
      }
      if (kinds[i] == FileKind::kNeither) {
        notes.push_back(fmt::format("{}: skipped, neither a JSON result nor a core", file));
        continue;
      }
      auto found = inputs_of_path(file, true, notes);
      if (!found) return found;
      inputs.insert(inputs.end(), found->begin(), found->end());
    }
    if (inputs.empty()) notes.push_back(fmt::format("{}: no JSON results or cores in it", path));
    return inputs;
  }
  if (looks_like_json(path)) return std::vector<TriageInput>{{TriageInput::Kind::kJson, path, 0, path}};
  if (*format == InputFormat::kUnknown && in_directory) {
    notes.push_back(fmt::format("{}: skipped, neither a JSON result nor a core", path));
    return std::vector<TriageInput>{};
  }
  // Given by name, anything else goes to the core reader, which says what is wrong with it.
  return std::vector<TriageInput>{{TriageInput::Kind::kCore, path, 0, path}};
}

}  // namespace

Expected<std::vector<TriageInput>> gather_triage_inputs(const std::vector<std::string>& paths,
                                                        const std::vector<int>& pids,
                                                        std::vector<std::string>& notes) {
  std::vector<TriageInput> inputs;
  for (const std::string& path : paths) {
    auto found = inputs_of_path(path, false, notes);
    if (!found) return found;
    inputs.insert(inputs.end(), found->begin(), found->end());
  }
  for (int pid : pids) inputs.push_back({TriageInput::Kind::kPid, "", pid, fmt::format("--pid {}", pid)});
  if (inputs.empty()) return make_error(ErrorKind::kInvalidInput, "triage: no inputs (give cores, JSON results, directories of them, or --pid PID)");
  return inputs;
}

}  // namespace hangpy::jobs
