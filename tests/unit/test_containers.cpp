// Which container a process runs in, from /proc/PID/cgroup texts as each runtime writes them
// (targets/containers.h).
#include <gtest/gtest.h>

#include "targets/containers.h"

using hangpy::coreanalyze::container_of_cgroup;

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
