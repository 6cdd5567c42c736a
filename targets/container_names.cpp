#include "targets/container_names.h"

#include <dirent.h>

#include <nlohmann/json.hpp>

#include "base/printable.h"
#include "targets/proc_file.h"

namespace hangpy::targets {
namespace {

constexpr size_t kMaxContainers = 4096;

bool full_id(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// containers/storage's record: [{"id": ..., "names": [NAME, ...], ...}, ...].
void podman_records(const std::string& path, std::vector<NamedContainer>& found) {
  auto text = read_proc_file(path);  // bounded read (64 MiB): a record of many containers
  if (!text) return;
  const nlohmann::json records = nlohmann::json::parse(*text, nullptr, false);
  if (!records.is_array()) return;
  for (const nlohmann::json& record : records) {
    if (found.size() >= kMaxContainers) return;
    if (!record.is_object()) continue;
    auto id = record.find("id");
    auto names = record.find("names");
    if (id == record.end() || !id->is_string() || !full_id(id->get<std::string>())) continue;
    if (names == record.end() || !names->is_array() || names->empty() || !(*names)[0].is_string()) continue;
    found.push_back({"podman", id->get<std::string>(), printable((*names)[0].get<std::string>(), 128)});
  }
}

// Docker: one directory per container, its config.v2.json's "Name" ("/web-1").
std::optional<std::string> docker_name(const std::string& dir, const std::string& id) {
  auto text = read_proc_file(dir + "/" + id + "/config.v2.json");
  if (!text) return std::nullopt;
  const nlohmann::json config = nlohmann::json::parse(*text, nullptr, false);
  if (!config.is_object()) return std::nullopt;
  auto name = config.find("Name");
  if (name == config.end() || !name->is_string()) return std::nullopt;
  std::string found = name->get<std::string>();
  if (found.starts_with('/')) found.erase(0, 1);
  if (found.empty()) return std::nullopt;
  return printable(found, 128);
}

void docker_records(const std::string& dir, std::vector<NamedContainer>& found) {
  DIR* containers = opendir(dir.c_str());
  if (containers == nullptr) return;
  while (const dirent* entry = readdir(containers)) {
    if (found.size() >= kMaxContainers) break;
    const std::string id = entry->d_name;
    if (!full_id(id)) continue;
    if (auto name = docker_name(dir, id)) found.push_back({"docker", id, *name});
  }
  closedir(containers);
}

}  // namespace

std::vector<NamedContainer> named_containers(const ContainerRecords& records) {
  std::vector<NamedContainer> found;
  podman_records(records.podman_containers_json, found);
  docker_records(records.docker_containers_dir, found);
  return found;
}

std::optional<std::string> container_name(const std::string& runtime, const std::string& id,
                                          const ContainerRecords& records) {
  if (runtime == "docker") return full_id(id) ? docker_name(records.docker_containers_dir, id) : std::nullopt;
  if (runtime != "podman") return std::nullopt;
  std::vector<NamedContainer> found;
  podman_records(records.podman_containers_json, found);
  for (const NamedContainer& container : found)
    if (container.id == id) return container.name;
  return std::nullopt;
}

}  // namespace hangpy::targets
