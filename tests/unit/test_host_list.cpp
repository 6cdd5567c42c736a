// pdsh's host lists (jobs/host_list.h), expanded as pdsh expands them.
#include <gtest/gtest.h>

#include "jobs/host_list.h"

using hangpy::jobs::expand_host_list;
using Hosts = std::vector<std::string>;

TEST(HostList, RangesCommasPaddingAndProducts) {
  EXPECT_EQ(*expand_host_list("node[01-03,07],gpu5"), (Hosts{"node01", "node02", "node03", "node07", "gpu5"}));
  EXPECT_EQ(*expand_host_list("r[1-2]n[8-9]"), (Hosts{"r1n8", "r1n9", "r2n8", "r2n9"}));
  EXPECT_EQ(*expand_host_list("a[9-11].lab"), (Hosts{"a9.lab", "a10.lab", "a11.lab"}));
  EXPECT_EQ(*expand_host_list("x,x,y"), (Hosts{"x", "y"}));
  EXPECT_EQ(*expand_host_list("node[001-002]"), (Hosts{"node001", "node002"}));
}

TEST(HostList, MistakesAreOneLine) {
  for (const char* bad : {"node[1-", "node[3-1]", "node[a-b]", "node[[1]]", "node[1-99999999]"}) {
    auto hosts = expand_host_list(bad);
    ASSERT_FALSE(hosts.has_value()) << bad;
    EXPECT_EQ(hosts.error().message.find('\n'), std::string::npos);
  }
}
