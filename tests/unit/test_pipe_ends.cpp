// The pipe ends a process holds (targets/pipe_ends.h): listed from this very process's /proc, and
// the snapshot note's encoding, whose decoding trusts nothing it reads.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <gtest/gtest.h>

#include "targets/pipe_ends.h"

using hangpy::targets::decode_pipe_ends;
using hangpy::targets::encode_pipe_ends;
using hangpy::targets::kMaxPipeEnds;
using hangpy::targets::live_pipe_ends;
using hangpy::cpython::PipeEnd;

TEST(PipeEnds, ThisProcessListsBothEndsOfItsPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const auto ends = live_pipe_ends(getpid());
  auto find = [&](int fd) { return std::find_if(ends.begin(), ends.end(), [&](const PipeEnd& e) { return e.fd == fd; }); };
  ASSERT_NE(find(fds[0]), ends.end());
  ASSERT_NE(find(fds[1]), ends.end());
  EXPECT_TRUE(find(fds[0])->read_end);
  EXPECT_FALSE(find(fds[1])->read_end);
  EXPECT_EQ(find(fds[0])->inode, find(fds[1])->inode);
  EXPECT_NE(find(fds[0])->inode, 0u);
  close(fds[0]);
  close(fds[1]);
}

TEST(PipeEnds, NoteRoundTrips) {
  const std::vector<PipeEnd> ends = {{0, 5, true}, {7, 1ull << 40, false}};
  const auto decoded = decode_pipe_ends(encode_pipe_ends(ends));
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[1].fd, 7);
  EXPECT_EQ(decoded[1].inode, 1ull << 40);
  EXPECT_FALSE(decoded[1].read_end);
  EXPECT_TRUE(decoded[0].read_end);
}

TEST(PipeEnds, HostileNoteKeepsOnlyWellFormedRecordsAndNoMoreThanTheLimit) {
  std::vector<std::byte> note = encode_pipe_ends({{3, 9, true}});
  uint64_t bad[3] = {4, 9, 7};  // an end flag that is neither 0 nor 1
  const size_t at = note.size();
  note.resize(at + sizeof bad + 5);  // and a record cut short
  std::memcpy(note.data() + at, bad, sizeof bad);
  const auto decoded = decode_pipe_ends(note);
  ASSERT_EQ(decoded.size(), 1u);
  EXPECT_EQ(decoded[0].fd, 3);
  std::vector<PipeEnd> many(kMaxPipeEnds + 10, PipeEnd{1, 2, false});
  EXPECT_EQ(decode_pipe_ends(encode_pipe_ends(many)).size(), kMaxPipeEnds);
}
