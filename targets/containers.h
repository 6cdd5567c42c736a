// Which container a process runs in, from its /proc/PID/cgroup and its PID namespace: the
// runtime (Docker, Podman, containerd, CRI-O, LXC, systemd-nspawn), the container's id and, under
// Kubernetes, the pod's UID. Runtimes put each container in a cgroup named after it
// ("docker-<id>.scope", "libpod-<id>.scope", "cri-containerd-<id>.scope", "/docker/<id>",
// "kubepods-...-pod<uid>.slice"); a process in a PID namespace of its own with no such cgroup
// (unshare, enroot, Apptainer) is said to be in a container of unknown kind.
#pragma once

#include <optional>
#include <string_view>

#include "cpython/target.h"

namespace hangpy::targets {

// What a /proc/PID/cgroup text says; nullopt when no line names a container.
std::optional<cpython::ContainerInfo> container_of_cgroup(std::string_view cgroup_text);

// The container of live process `pid` (its cgroup file, its PID namespace against ours);
// nullopt when it runs in none that can be told, or in the same one as this process.
std::optional<cpython::ContainerInfo> live_container(int pid);

}  // namespace hangpy::targets
