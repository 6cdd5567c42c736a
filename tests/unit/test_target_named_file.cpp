// Files a target names (base/target_named_file.h): opened inside a root only, regular files only,
// never blocking; and whether the process could have read one itself.
#include "base/target_named_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace hangpy {
namespace {

class TargetNamedFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/hangpy-named-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    top_ = pattern;
    root_ = top_ + "/root";
    std::filesystem::create_directories(root_ + "/src");
    std::ofstream(root_ + "/src/app.py") << "print(1)\n";
    std::ofstream(top_ + "/outside.txt") << "secret\n";
    std::filesystem::create_symlink(top_ + "/outside.txt", root_ + "/src/link.py");
    ASSERT_EQ(mkfifo((root_ + "/src/fifo").c_str(), 0600), 0);
  }
  void TearDown() override { std::filesystem::remove_all(top_); }
  std::string top_, root_;
};

TEST_F(TargetNamedFile, InsideTheRootOnly) {
  EXPECT_TRUE(open_target_file(root_, "/src/app.py").has_value());
  // ".." and an absolute link resolve inside the root, where there is no such file.
  EXPECT_FALSE(open_target_file(root_, "/../outside.txt").has_value());
  EXPECT_FALSE(open_target_file(root_, "/src/../../outside.txt").has_value());
  EXPECT_FALSE(open_target_file(root_, "/src/link.py").has_value());
  EXPECT_TRUE(open_target_file("", top_ + "/outside.txt").has_value());
}

TEST_F(TargetNamedFile, RegularFilesOnlyWithoutBlocking) {
  auto fifo = open_target_file("", root_ + "/src/fifo");  // would block a plain open
  ASSERT_FALSE(fifo.has_value());
  EXPECT_EQ(fifo.error().kind, ErrorKind::kInvalidInput);
  EXPECT_FALSE(open_target_file("", "/dev/zero").has_value());
  EXPECT_FALSE(open_target_file("", root_).has_value());
}

TEST_F(TargetNamedFile, NeverTheKernelsViewsNorThroughMagicLinks) {
  // Read by this program, these would be its own: the analyst's environment and name.
  for (const char* path : {"/proc/self/environ", "/proc/self/status", "/proc/version",
                           "/sys/kernel/mm/transparent_hugepage/enabled"}) {
    auto opened = open_target_file("", path);
    ASSERT_FALSE(opened.has_value()) << path;
    EXPECT_EQ(opened.error().kind, ErrorKind::kInvalidInput) << path;
  }
  // /proc/self/cwd is a magic link: it would lead to this program's working directory.
  ASSERT_EQ(::chdir(root_.c_str()), 0);
  EXPECT_TRUE(open_target_file("", root_ + "/src/app.py").has_value());
  EXPECT_FALSE(open_target_file("", "/proc/self/cwd/src/app.py").has_value());
  EXPECT_FALSE(open_target_file(root_, "/proc/self/environ").has_value());
  ASSERT_EQ(::chdir("/"), 0);
}

TEST_F(TargetNamedFile, PathsInsideTheRoot) {
  EXPECT_TRUE(path_inside_root(root_, root_ + "/src/app.py").has_value());
  EXPECT_FALSE(path_inside_root(root_, root_ + "/../outside.txt").has_value());
  EXPECT_FALSE(path_inside_root(root_, root_ + "/src/link.py").has_value());
}

TEST(ProcessCouldRead, ByOwnerGroupAndOthers) {
  struct stat status {};
  status.st_uid = 0;
  status.st_gid = 0;
  status.st_mode = S_IFREG | 0600;
  EXPECT_FALSE(process_could_read(status, 1000u, 1000u));
  EXPECT_TRUE(process_could_read(status, 0u, 0u));
  EXPECT_FALSE(process_could_read(status, std::nullopt, std::nullopt));
  status.st_mode = S_IFREG | 0640;
  EXPECT_TRUE(process_could_read(status, 1000u, 0u));
  status.st_mode = S_IFREG | 0644;
  EXPECT_TRUE(process_could_read(status, std::nullopt, std::nullopt));
}

}  // namespace
}  // namespace hangpy
