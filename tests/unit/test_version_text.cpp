// The version texts users type (--python) and the file names the interpreter maps.
#include <gtest/gtest.h>

#include "cpython/version_probe.h"

namespace hangpy::cpython {
namespace {

TEST(ParseVersion, AcceptsMajorMinorMicroAndFreeThreaded) {
  auto plain = parse_version("3.11");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->major, 3);
  EXPECT_EQ(plain->minor, 11);
  EXPECT_EQ(plain->micro, -1);
  EXPECT_FALSE(plain->free_threaded);
  auto full = parse_version("3.13.2t");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->micro, 2);
  EXPECT_TRUE(full->free_threaded);
}

TEST(ParseVersion, RejectsAnythingElse) {
  for (const char* text : {"", "3", "3.", ".11", "3.11.", "3.11x", "3.11tt", "v3.11", "3.11 ",
                           "3.99999999999", "99999999999999999999.1", "3.-1"}) {
    EXPECT_FALSE(parse_version(text)) << text;
  }
}

TEST(VersionFromFileName, ReadsInterpreterAndLibraryNames) {
  struct Case {
    const char* path;
    int minor;
    bool free_threaded;
  };
  for (const Case& c : {Case{"/usr/bin/python3.11", 11, false},
                        Case{"/opt/lib/libpython3.13t.so.1.0", 13, true},
                        Case{"python3.7m", 7, false}, Case{"libpython3.13td.so", 13, true},
                        Case{"libpython2.7.so.1.0", 7, false}}) {
    auto version = version_from_file_name(c.path);
    ASSERT_TRUE(version) << c.path;
    EXPECT_EQ(version->minor, c.minor) << c.path;
    EXPECT_EQ(version->free_threaded, c.free_threaded) << c.path;
  }
}

TEST(VersionFromFileName, IgnoresOtherFiles) {
  for (const char* path : {"/usr/bin/python3", "/usr/bin/python3.11-config", "libc.so.6",
                           "/usr/lib/python3.11/lib-dynload/_ssl.so", "python.11", "xpython3.11"}) {
    EXPECT_FALSE(version_from_file_name(path)) << path;
  }
}

}  // namespace
}  // namespace hangpy::cpython
