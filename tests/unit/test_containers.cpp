// Which container a process runs in, from /proc/PID/cgroup texts as each runtime writes them
// (targets/containers.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "report/process_labels.h"
#include "targets/container_names.h"
#include "targets/containers.h"
#include "targets/namespace_pids.h"

using hangpy::targets::container_of_cgroup;
namespace fs = std::filesystem;

namespace {
const char* kId = "3f2a9c81d0e4b5a6c7d8e9f00112233445566778899aabbccddeeff001122334";
}

TEST(Containers, DockerAndPodmanUnderSystemd) {
  auto docker = container_of_cgroup(std::string("0::/system.slice/docker-") + kId + ".scope\n");
  ASSERT_TRUE(docker);
  EXPECT_EQ(docker->runtime, "docker");
  EXPECT_EQ(docker->id, kId);
  auto podman = container_of_cgroup(std::string("0::/machine.slice/libpod-") + kId + ".scope/container\n");
  ASSERT_TRUE(podman);
  EXPECT_EQ(podman->runtime, "podman");
  EXPECT_EQ(podman->id, kId);
}

TEST(Containers, CgroupfsDriversAndKubernetes) {
  auto docker = container_of_cgroup(std::string("12:memory:/docker/") + kId + "\n0::/\n");
  ASSERT_TRUE(docker);
  EXPECT_EQ(docker->runtime, "docker");
  auto pod = container_of_cgroup(
      std::string("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0b6e1f2a_3c4d_4e5f_8a9b_0c1d2e3f4a5b.slice/"
                  "cri-containerd-") + kId + ".scope\n");
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->runtime, "containerd");
  EXPECT_EQ(pod->id, kId);
  EXPECT_EQ(pod->pod_uid, "0b6e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b");
  auto v1 = container_of_cgroup(std::string("4:memory:/kubepods/burstable/pod0b6e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b/") + kId + "\n");
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->pod_uid, "0b6e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b");
  EXPECT_EQ(v1->id, kId);
}

TEST(Containers, NoContainerInOrdinaryCgroups) {
  EXPECT_FALSE(container_of_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"));
  EXPECT_FALSE(container_of_cgroup("0::/system.slice/ssh.service\n"));
  EXPECT_FALSE(container_of_cgroup("4:memory:/process_api/b46346221a949b93cb89a9c21bcb39b3\n0::/\n"));
  EXPECT_FALSE(container_of_cgroup(""));
  // A scope prefix without an id is no container of that runtime.
  EXPECT_FALSE(container_of_cgroup("0::/system.slice/docker-compose.scope\n"));
}

// The names the runtimes' own records give: Podman's containers.json, Docker's config.v2.json.
TEST(Containers, NamesFromTheRuntimesRecords) {
  const fs::path dir = fs::temp_directory_path() / ("hangpy-names-" + std::to_string(::getpid()));
  fs::create_directories(dir / "docker" / kId);
  const std::string other = std::string(63, 'a') + "b";
  {
    std::ofstream podman(dir / "containers.json");
    podman << R"([{"id": ")" << other << R"(", "names": ["web-1"], "image": "x"},
                 {"id": "not-an-id", "names": ["bad"]}, {"id": ")" << kId << R"(", "names": []}])";
    std::ofstream docker(dir / "docker" / kId / "config.v2.json");
    docker << R"({"ID": ")" << kId << R"(", "Name": "/trainer\u001b[31m"})";
  }
  hangpy::targets::ContainerRecords records{(dir / "containers.json").string(), (dir / "docker").string()};
  const auto found = hangpy::targets::named_containers(records);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].runtime, "podman");
  EXPECT_EQ(found[0].id, other);
  EXPECT_EQ(found[0].name, "web-1");
  EXPECT_EQ(found[1].runtime, "docker");
  // A name is the container's to choose: escaped, never a terminal's escape sequence.
  EXPECT_EQ(found[1].name.find('\x1b'), std::string::npos);
  EXPECT_EQ(hangpy::targets::container_name("podman", other, records), "web-1");
  EXPECT_EQ(hangpy::targets::container_name("docker", other, records), std::nullopt);
  EXPECT_EQ(hangpy::targets::container_name("containerd", other, records), std::nullopt);
  fs::remove_all(dir);
  EXPECT_TRUE(hangpy::targets::named_containers(records).empty());
}

// A snapshot's note of namespace PIDs: what is written is read back; damage is dropped.
TEST(Containers, NamespacePidsNote) {
  using hangpy::cpython::NamespacePid;
  const std::vector<NamespacePid> pids = {{23117, 1}, {23128, 6}};
  auto bytes = hangpy::targets::encode_namespace_pids(pids);
  auto back = hangpy::targets::decode_namespace_pids(bytes);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].pid, 23128);
  EXPECT_EQ(back[1].namespace_pid, 6);
  EXPECT_EQ(hangpy::targets::host_pid_of(back, 6), 23128);
  EXPECT_EQ(hangpy::targets::host_pid_of(back, 7), std::nullopt);
  bytes.resize(bytes.size() - 3);  // cut short: the last record is dropped
  EXPECT_EQ(hangpy::targets::decode_namespace_pids(bytes).size(), 1u);
  auto zero = hangpy::targets::encode_namespace_pids({{0, 5}, {-1, 2}});
  EXPECT_TRUE(hangpy::targets::decode_namespace_pids(zero).empty());
}

TEST(Containers, DescribedWithNameAndPidInside) {
  hangpy::cpython::ContainerInfo container;
  container.runtime = "podman";
  container.id = kId;
  container.name = "web-1";
  container.own_pid_namespace = true;
  EXPECT_EQ(hangpy::report::describe_container(container, 1),
            "podman container 3f2a9c81d0e4 \"web-1\" (its own PID namespace, where it is PID 1)");
  container.name.clear();
  EXPECT_EQ(hangpy::report::describe_container(container), "podman container 3f2a9c81d0e4 (its own PID namespace)");
}
