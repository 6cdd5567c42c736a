// describe_versions: the version range --version and the gdb module print, from the tables.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "cpython/layouts/all_layouts.h"
#include "cpython/version_probe.h"

namespace hangpy::cpython {
namespace {

Layout layout(std::string_view name, int major, int minor, bool free_threaded = false) {
  Layout table;
  table.name = name;
  table.major = major;
  table.minor = minor;
  table.free_threaded = free_threaded;
  return table;
}

TEST(SupportedVersions, RunsOfThreeOrMoreBecomeRangesFreeThreadedLast) {
  const Layout l27 = layout("2.7", 2, 7), l36 = layout("3.6", 3, 6), l37 = layout("3.7", 3, 7),
               l38 = layout("3.8", 3, 8), l313t = layout("3.13t", 3, 13, true),
               l314t = layout("3.14t", 3, 14, true);
  // In the order all_layouts keeps them: free-threaded tables beside their version.
  std::array<const Layout*, 6> tables = {&l27, &l36, &l313t, &l37, &l314t, &l38};
  EXPECT_EQ(describe_versions(tables), "2.7, 3.6 to 3.8, 3.13t and 3.14t");
}

TEST(SupportedVersions, ShortRunsAndGapsAreListed) {
  const Layout l36 = layout("3.6", 3, 6), l37 = layout("3.7", 3, 7), l39 = layout("3.9", 3, 9);
  std::array<const Layout*, 3> tables = {&l39, &l37, &l36};
  EXPECT_EQ(describe_versions(tables), "3.6, 3.7 and 3.9");
  std::array<const Layout*, 1> one = {&l39};
  EXPECT_EQ(describe_versions(one), "3.9");
  EXPECT_EQ(describe_versions({}), "");
}

// Every compiled table is inside what supported_versions() says, and nothing else is: each part
// is a table's name or "A to B" whose every version has a table.
TEST(SupportedVersions, CoversExactlyTheCompiledTables) {
  std::string text = supported_versions();
  for (std::string separator : {std::string(" and "), std::string(", ")}) {
    for (size_t at; (at = text.find(separator)) != std::string::npos;)
      text.replace(at, separator.size(), ";");
  }
  size_t named = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = std::min(text.find(';', start), text.size());
    std::string part = text.substr(start, end - start);
    size_t to = part.find(" to ");
    if (to == std::string::npos) {
      EXPECT_NE(find_layout(part), nullptr) << part;
      ++named;
    } else {
      auto first = parse_version(part.substr(0, to));
      auto last = parse_version(part.substr(to + 4));
      ASSERT_TRUE(first && last) << part;
      ASSERT_EQ(first->major, last->major) << part;
      for (int minor = first->minor; minor <= last->minor; ++minor, ++named)
        EXPECT_NE(find_layout(first->major, minor, first->free_threaded), nullptr) << part;
    }
    start = end + 1;
  }
  EXPECT_EQ(named, all_layouts().size()) << supported_versions();
}

}  // namespace
}  // namespace hangpy::cpython
