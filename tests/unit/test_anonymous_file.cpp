// coreanalyze/anonymous_file: both kinds of file hold what is written, read back from the start,
// and leave nothing behind in the directory.
#include "base/anonymous_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace hangpy::jobs {
namespace {

std::string round_trip(int file) {
  const std::string text = "dot: syntax error in line 3\n";
  EXPECT_EQ(write(file, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  EXPECT_EQ(lseek(file, 0, SEEK_SET), 0);
  std::string back(text.size() + 8, '\0');
  const ssize_t got = read(file, back.data(), back.size());
  back.resize(got > 0 ? static_cast<size_t>(got) : 0);
  EXPECT_NE(fcntl(file, F_GETFD) & FD_CLOEXEC, 0) << "a child would inherit it";
  close(file);
  return back;
}

// Entries of a directory other than . and ..
int entries(const std::string& directory) {
  int count = 0;
  DIR* listing = opendir(directory.c_str());
  if (!listing) return -1;
  while (dirent* entry = readdir(listing)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") ++count;
  }
  closedir(listing);
  return count;
}

class AnonymousFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/hangpy-anonymous-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
    const char* old = std::getenv("TMPDIR");
    if (old) old_tmpdir_ = old;
    had_tmpdir_ = old != nullptr;
    setenv("TMPDIR", directory_.c_str(), 1);
  }
  void TearDown() override {
    if (had_tmpdir_) {
      setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    } else {
      unsetenv("TMPDIR");
    }
    rmdir(directory_.c_str());
  }
  std::string directory_;
  std::string old_tmpdir_;
  bool had_tmpdir_ = false;
};

TEST_F(AnonymousFileTest, MemoryFileHoldsWhatWasWritten) {
  const int file = anonymous_file("hangpy-test");
  ASSERT_GE(file, 0);
  EXPECT_EQ(round_trip(file), "dot: syntax error in line 3\n");
  EXPECT_EQ(entries(directory_), 0);
}

TEST_F(AnonymousFileTest, TemporaryFileHoldsWhatWasWrittenAndHasNoName) {
  const int file = unlinked_temporary_file("hangpy-test");
  ASSERT_GE(file, 0);
  EXPECT_EQ(entries(directory_), 0) << "the file must be unlinked at once";
  EXPECT_EQ(round_trip(file), "dot: syntax error in line 3\n");
}

TEST_F(AnonymousFileTest, TemporaryFileInAMissingDirectoryFails) {
  setenv("TMPDIR", (directory_ + "/missing").c_str(), 1);
  EXPECT_EQ(unlinked_temporary_file("hangpy-test"), -1);
}

}  // namespace
}  // namespace hangpy::jobs
