// ABRT's `open_fds` item (inputs/abrt_directory.h): "FD:PATH" lines, each followed by the fd's
// fdinfo, as abrt-hook-ccpp writes them; what a crashed process's files say is escaped.
#include <gtest/gtest.h>

#include "inputs/abrt_directory.h"

using hangpy::inputs::parse_abrt_open_fds;

TEST(AbrtOpenFds, DescriptorsAndTheirFilesFdinfoSkipped) {
  const auto files = parse_abrt_open_fds(
      "0:/dev/null\npos:\t0\nflags:\t0100000\nmnt_id:\t24\nino:\t5\n\n"
      "3:/tmp/hangpy-fifo-x/requests.fifo\npos:\t0\nflags:\t02\n\n"
      "4:socket:[2709637]\n"
      "12:pipe:[2682414]\n");
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files.at(0), "/dev/null");
  EXPECT_EQ(files.at(3), "/tmp/hangpy-fifo-x/requests.fifo");
  EXPECT_EQ(files.at(4), "socket:[2709637]");
  EXPECT_EQ(files.at(12), "pipe:[2682414]");
}

TEST(AbrtOpenFds, HostileTextIsEscapedAndJunkSkipped) {
  const auto files = parse_abrt_open_fds(
      "5:/tmp/\x1b]0;owned\x07name\n"
      ":no-fd\n-1:/negative\nabc:/letters\n99999999999999999999:/too-big\n");
  ASSERT_EQ(files.count(5), 1u);
  EXPECT_EQ(files.at(5).find('\x1b'), std::string::npos);
  EXPECT_EQ(files.at(5).find('\x07'), std::string::npos);
  EXPECT_EQ(files.count(-1), 0u);
  EXPECT_EQ(files.size(), 1u);
}
