// /proc/PID/maps text as ABRT and apport save it (targets/proc_maps.h).
#include <gtest/gtest.h>

#include "targets/proc_maps.h"

namespace hangpy::targets {
namespace {

TEST(ProcMaps, KeepsFileBackedLinesOnly) {
  const auto mappings = parse_proc_maps(
      "00400000-00421000 r--p 00000000 fe:01 1311                       /usr/bin/python3.11\n"
      "00421000-006f2000 r-xp 00021000 fe:01 1311                       /usr/bin/python3.11\n"
      "01c3d000-01d5e000 rw-p 00000000 00:00 0                          [heap]\n"
      "7f6d3c000000-7f6d3c021000 rw-p 00000000 00:00 0 \n"
      "7f6d3c400000-7f6d3c428000 r--p 00000000 fe:01 2890   /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f6d3c600000-7f6d3c601000 rw-s 00000000 00:05 77     /dev/shm/my file (deleted)\n"
      "7ffd5c9e0000-7ffd5ca01000 rw-p 00000000 00:00 0                  [stack]");
  ASSERT_EQ(mappings.size(), 4u);
  EXPECT_EQ(mappings[0].start, 0x400000u);
  EXPECT_EQ(mappings[0].end, 0x421000u);
  EXPECT_EQ(mappings[0].file_offset, 0u);
  EXPECT_EQ(mappings[0].path, "/usr/bin/python3.11");
  EXPECT_EQ(mappings[1].file_offset, 0x21000u);
  EXPECT_EQ(mappings[2].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(mappings[3].path, "/dev/shm/my file (deleted)");  // spaces and the suffix kept
}

TEST(ProcMaps, SkipsLinesThatDoNotParse) {
  const auto mappings = parse_proc_maps(
      "garbage\n"
      "00500000-00400000 r--p 00000000 fe:01 1 /backwards\n"
      "00400000-00500000 r--p zz fe:01 1 /bad-offset\n"
      "00400000 r--p 00000000 fe:01 1 /no-range\n"
      "ffffffffffffffffff-0 r--p 0 0 0 /overflow\n"
      "00400000-00500000 r--p 00000000 fe:01 1\n"
      "\n\n"
      "00400000-00500000 r--p 00001000 fe:01 1 /ok");
  ASSERT_EQ(mappings.size(), 1u);
  EXPECT_EQ(mappings[0].path, "/ok");
  EXPECT_EQ(mappings[0].file_offset, 0x1000u);
  EXPECT_TRUE(parse_proc_maps("").empty());
}

}  // namespace
}  // namespace hangpy::targets
