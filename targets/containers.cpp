#include "targets/containers.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/printable.h"
#include "targets/container_names.h"
#include "targets/proc_file.h"

namespace hangpy::targets {
namespace {

// Runtime prefixes of a cgroup path's component, before the container's id.
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kScopePrefixes = {{
    {"docker-", "docker"},
    {"libpod-", "podman"},
    {"cri-containerd-", "containerd"},
    {"crio-", "cri-o"},
    {"containerd-", "containerd"},
    {"lxc.payload.", "lxc"},
    {"machine-", "systemd-nspawn"},
    {"nerdctl-", "containerd"},
}};

bool hex_id(std::string_view text) {
  return text.size() >= 12 && text.size() <= 128 &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (!part.empty()) parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path = path.substr(slash + 1);
  }
  return parts;
}

// A Kubernetes pod's UID from "kubepods-burstable-pod<uid>.slice" (systemd driver: '_' for '-')
// or "pod<uid>" (cgroupfs driver).
std::optional<std::string> pod_uid(std::string_view part) {
  const size_t at = part.rfind("pod");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view uid = part.substr(at + 3);
  if (uid.ends_with(".slice")) uid.remove_suffix(6);
  std::string text(uid);
  std::replace(text.begin(), text.end(), '_', '-');
  if (text.size() != 36 || std::count(text.begin(), text.end(), '-') != 4) return std::nullopt;
  return text;
}

// The container one cgroup path names.
std::optional<cpython::ContainerInfo> container_of_path(std::string_view path) {
  cpython::ContainerInfo found;
  bool any = false;
  std::string_view previous;
  bool kubepods = false;  // under Kubernetes' cgroup: a "pod<uid>" component names the pod
  for (std::string_view part : components(path)) {
    if (part.starts_with("kubepods")) {
      kubepods = true;
      if (auto uid = pod_uid(part)) {
        found.pod_uid = *uid;
        any = true;
      }
    } else if (part.starts_with("pod") && kubepods) {
      if (auto uid = pod_uid(part)) {
        found.pod_uid = *uid;
        any = true;
      }
    }
    std::string_view name = part;
    if (name.ends_with(".scope")) name.remove_suffix(6);
    for (const auto& [prefix, runtime] : kScopePrefixes) {
      if (!name.starts_with(prefix)) continue;
      const std::string_view id = name.substr(prefix.size());
      if (runtime == "lxc" || runtime == "systemd-nspawn" || hex_id(id)) {
        found.runtime = std::string(runtime);
        found.id = printable(id, 128);
        any = true;
      }
      break;
    }
    // cgroupfs drivers: "/docker/<id>", "/kubepods/burstable/pod<uid>/<id>", "/lxc/<name>".
    if (found.id.empty() && hex_id(part) && (previous == "docker" || previous.starts_with("pod"))) {
      found.runtime = previous == "docker" ? "docker" : "containerd";
      found.id = std::string(part);
      any = true;
    }
    previous = part;
  }
  if (!any) return std::nullopt;
  if (found.runtime.empty() && !found.pod_uid.empty()) found.runtime = "containerd";
  return found;
}

}  // namespace

std::optional<cpython::ContainerInfo> container_of_cgroup(std::string_view cgroup_text) {
  // "hierarchy-ID:controllers:path" lines; the unified one (0::) first where both are there.
  std::optional<cpython::ContainerInfo> best;
  while (!cgroup_text.empty()) {
    const size_t end = cgroup_text.find('\n');
    const std::string_view line = cgroup_text.substr(0, end);
    cgroup_text = end == std::string_view::npos ? std::string_view() : cgroup_text.substr(end + 1);
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    auto found = container_of_path(line.substr(second + 1));
    if (found && (!best || (best->id.empty() && !found->id.empty()))) best = std::move(found);
  }
  return best;
}

std::optional<cpython::ContainerInfo> live_container(int pid) {
  std::optional<cpython::ContainerInfo> container;
  if (auto text = read_proc_file(fmt::format("/proc/{}/cgroup", pid))) container = container_of_cgroup(*text);
  struct stat theirs {}, ours {};
  const bool own_namespace = stat(fmt::format("/proc/{}/ns/pid", pid).c_str(), &theirs) == 0 &&
                             stat("/proc/self/ns/pid", &ours) == 0 &&
                             (theirs.st_ino != ours.st_ino || theirs.st_dev != ours.st_dev);
  // Inside the same container as the reader (hangpy run in it): nothing sets the process apart.
  if (container && !own_namespace) {
    if (auto self = read_proc_file("/proc/self/cgroup")) {
      const auto ours_too = container_of_cgroup(*self);
      if (ours_too && ours_too->id == container->id && ours_too->pod_uid == container->pod_uid) return std::nullopt;
    }
  }
  if (!container && !own_namespace) return std::nullopt;
  if (!container) container.emplace();
  container->own_pid_namespace = own_namespace;
  if (!container->id.empty())
    if (auto name = container_name(container->runtime, container->id)) container->name = *name;
  return container;
}

}  // namespace hangpy::targets
