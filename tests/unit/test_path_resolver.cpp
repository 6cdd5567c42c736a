// PathResolver over a temporary directory tree: a sysroot, library directories, and two ELF
// files with different build-ids (copies of /bin/true and /bin/false) to test the build-id check.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "symbols/elf_file.h"
#include "symbols/path_resolver.h"

namespace hangpy::symbols {
namespace {

namespace fs = std::filesystem;

class PathResolverTest : public testing::Test {
 protected:
  void SetUp() override {
    for (const char* binary : {"/bin/true", "/bin/false"}) {
      if (!fs::exists(binary)) GTEST_SKIP() << binary << " is missing";
    }
    std::string pattern = (fs::temp_directory_path() / "hangpy-resolver-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    sysroot_ = (root_ / "sysroot").string();
    lib_dir_ = (root_ / "libs").string();
    fs::create_directories(sysroot_ + "/usr/lib");
    fs::create_directories(lib_dir_);

    true_id_ = build_id_of("/bin/true");
    false_id_ = build_id_of("/bin/false");
    if (!true_id_ || !false_id_ || *true_id_ == *false_id_) {
      GTEST_SKIP() << "/bin/true and /bin/false need distinct build-ids";
    }
  }
  void TearDown() override {
    std::error_code ignored;
    if (!root_.empty()) fs::remove_all(root_, ignored);
  }

  static std::optional<std::string> build_id_of(const std::string& path) {
    auto file = ElfFile::open(path);
    return file ? (*file)->build_id() : std::nullopt;
  }
  void copy(const std::string& from, const std::string& to) {
    fs::create_directories(fs::path(to).parent_path());
    fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  }

  fs::path root_;
  std::string sysroot_;
  std::string lib_dir_;
  std::optional<std::string> true_id_;
  std::optional<std::string> false_id_;
};

TEST_F(PathResolverTest, CandidatesComeInDocumentedOrder) {
  PathResolver with_sysroot(sysroot_ + "/", {"/a", "/b"});
  EXPECT_EQ(
      with_sysroot.candidates("/usr/lib/libfoo.so"),
      (std::vector<std::string>{sysroot_ + "/usr/lib/libfoo.so", "/a/libfoo.so", "/b/libfoo.so"}));
  PathResolver without_sysroot("", {"/a"});
  EXPECT_EQ(without_sysroot.candidates("/usr/lib/libfoo.so"),
            (std::vector<std::string>{"/a/libfoo.so", "/usr/lib/libfoo.so"}));
}

TEST_F(PathResolverTest, SysrootComesFirst) {
  copy("/bin/true", sysroot_ + "/usr/lib/libfoo.so");
  copy("/bin/true", lib_dir_ + "/libfoo.so");
  PathResolver resolver(sysroot_, {lib_dir_});
  EXPECT_EQ(resolver.resolve("/usr/lib/libfoo.so"), sysroot_ + "/usr/lib/libfoo.so");
}

// finds() answers as resolve() does, with and without a sysroot and library directories, for a
// file that is there, one that is not, and a directory.
TEST_F(PathResolverTest, FindsAnswersAsResolve) {
  copy("/bin/true", sysroot_ + "/usr/lib/libfoo.so");
  copy("/bin/true", lib_dir_ + "/libbar.so");
  const std::string recorded = (root_ / "recorded" / "libbaz.so").string();
  copy("/bin/true", recorded);
  const std::vector<PathResolver> resolvers = {PathResolver(sysroot_, {lib_dir_}), PathResolver("", {lib_dir_}),
                                               PathResolver("", {}), PathResolver(sysroot_, {})};
  size_t found = 0;
  for (const PathResolver& resolver : resolvers) {
    for (const std::string& path : {std::string("/usr/lib/libfoo.so"), std::string("/usr/lib/libbar.so"), recorded,
                                   std::string("/usr/lib/libnone.so"), lib_dir_, std::string("/")}) {
      EXPECT_EQ(resolver.finds(path), resolver.resolve(path).has_value()) << path;
      found += resolver.finds(path);
    }
  }
  EXPECT_GE(found, 4u);  // libfoo by the sysroot, libbar by the library directory, libbaz as recorded
}

TEST_F(PathResolverTest, LibPathIsSearchedByBaseName) {
  copy("/bin/true", lib_dir_ + "/libfoo.so");
  PathResolver resolver(sysroot_, {(root_ / "empty").string(), lib_dir_});
  EXPECT_EQ(resolver.resolve("/opt/build/lib/libfoo.so"), lib_dir_ + "/libfoo.so");
}

TEST_F(PathResolverTest, RecordedPathIsUsedOnlyWithoutSysroot) {
  const std::string recorded = (root_ / "elsewhere" / "libfoo.so").string();
  copy("/bin/true", recorded);
  EXPECT_EQ(PathResolver("", {}).resolve(recorded), recorded);
  EXPECT_EQ(PathResolver(sysroot_, {}).resolve(recorded), std::nullopt);
}

TEST_F(PathResolverTest, MissingFileAndDirectoriesAreNotFound) {
  fs::create_directories(lib_dir_ + "/libdir.so");
  PathResolver resolver(sysroot_, {lib_dir_});
  EXPECT_EQ(resolver.resolve("/usr/lib/libmissing.so"), std::nullopt);
  EXPECT_EQ(resolver.resolve("/usr/lib/libdir.so"), std::nullopt);
}

TEST_F(PathResolverTest, BuildIdMismatchSkipsACandidate) {
  copy("/bin/false", sysroot_ + "/usr/lib/libfoo.so");
  copy("/bin/true", lib_dir_ + "/libfoo.so");
  PathResolver resolver(sysroot_, {lib_dir_});
  EXPECT_EQ(resolver.resolve("/usr/lib/libfoo.so", true_id_), lib_dir_ + "/libfoo.so");
  EXPECT_EQ(resolver.resolve("/usr/lib/libfoo.so", false_id_), sysroot_ + "/usr/lib/libfoo.so");
  EXPECT_EQ(resolver.resolve("/usr/lib/libfoo.so", std::string("00112233")), std::nullopt);
  // Without an expected build-id the first existing candidate wins.
  EXPECT_EQ(resolver.resolve("/usr/lib/libfoo.so"), sysroot_ + "/usr/lib/libfoo.so");
}

TEST_F(PathResolverTest, CandidateWithoutBuildIdIsAccepted) {
  std::ofstream(sysroot_ + "/usr/lib/libfoo.so") << "not an ELF file";
  PathResolver resolver(sysroot_, {});
  EXPECT_EQ(resolver.resolve("/usr/lib/libfoo.so", true_id_), sysroot_ + "/usr/lib/libfoo.so");
}

}  // namespace
}  // namespace hangpy::symbols

// A core names its files: under a sysroot, its ".." never climb out (issue 22).
TEST(PathResolverConfinement, DotDotStaysUnderTheSysroot) {
  using hangpy::symbols::lexically_rooted;
  EXPECT_EQ(lexically_rooted("/../../etc/shadow"), "/etc/shadow");
  EXPECT_EQ(lexically_rooted("/usr/lib/../lib64/./x.so"), "/usr/lib64/x.so");
  EXPECT_EQ(lexically_rooted("a/../../b"), "/b");
  EXPECT_EQ(lexically_rooted(".."), "/");
  const hangpy::symbols::PathResolver resolver("/sysroot", {});
  for (const std::string& candidate : resolver.candidates("/../../../etc/passwd"))
    EXPECT_TRUE(candidate.starts_with("/sysroot/")) << candidate;
  for (const std::string& candidate : resolver.candidates("/sysroot/../etc/passwd"))
    EXPECT_TRUE(candidate.starts_with("/sysroot/")) << candidate;
}
