// The names of the containers on this machine, as their runtimes record them in files of their
// own: Podman's (containers/storage's containers.json of its root storage) and Docker's
// (/var/lib/docker/containers/ID/config.v2.json). Read, never asked of a daemon: reading a hung
// job must not depend on a daemon being up, and Podman has none.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hangpy::targets {

struct NamedContainer {
  std::string runtime;  // "podman", "docker"
  std::string id;       // the full id (64 hex digits)
  std::string name;     // printable, at most 128 bytes
};

// Where the runtimes keep their records; the defaults are the rootful runtimes' own.
struct ContainerRecords {
  std::string podman_containers_json = "/var/lib/containers/storage/overlay-containers/containers.json";
  std::string docker_containers_dir = "/var/lib/docker/containers";
};

// Every container those records name; empty where none can be read. At most 4,096.
std::vector<NamedContainer> named_containers(const ContainerRecords& records = {});

// The name of the container `id` (its full id), where the records know it.
std::optional<std::string> container_name(const std::string& runtime, const std::string& id,
                                          const ContainerRecords& records = {});

}  // namespace hangpy::targets
