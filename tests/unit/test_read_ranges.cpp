// ReadRanges: what a snapshot keeps of a page is exactly the bytes that were read.
#include "cpython/read_ranges.h"

#include <gtest/gtest.h>

#include <vector>

namespace hangpy::cpython {
namespace {

std::vector<std::byte> filled(size_t size) { return std::vector<std::byte>(size, std::byte{0xAA}); }

TEST(ReadRanges, MergesTouchingAndOverlappingRanges) {
  ReadRanges ranges;
  ranges.add(100, 10);
  ranges.add(110, 5);   // touches
  ranges.add(105, 20);  // overlaps both
  ranges.add(200, 1);
  ranges.add(90, 0);    // nothing
  ASSERT_EQ(ranges.ranges().size(), 2u);
  EXPECT_EQ(ranges.ranges().at(100), 125u);
  EXPECT_EQ(ranges.ranges().at(200), 201u);
  EXPECT_EQ(ranges.bytes(), 26u);
}

TEST(ReadRanges, AddingARangeThatCoversSeveralMergesThemAll) {
  ReadRanges ranges;
  ranges.add(10, 2);
  ranges.add(20, 2);
  ranges.add(30, 2);
  ranges.add(5, 40);
  ASSERT_EQ(ranges.ranges().size(), 1u);
  EXPECT_EQ(ranges.ranges().at(5), 45u);
}

TEST(ReadRanges, PagesAreThoseHoldingAReadByte) {
  ReadRanges ranges;
  ranges.add(0x1ffe, 4);  // across a page boundary
  ranges.add(0x5000, 1);
  EXPECT_EQ(ranges.pages(), (std::set<uint64_t>{0x1000, 0x2000, 0x5000}));
}

TEST(ReadRanges, ClearUnreadZeroesEveryByteNoRangeCovers) {
  ReadRanges ranges;
  ranges.add(0x1000 + 8, 8);
  ranges.add(0x1000 + 100, 4);
  ranges.add(0x0ff0, 0x20);  // ends inside the page
  auto page = filled(4096);
  ranges.clear_unread(0x1000, page);
  for (size_t i = 0; i < page.size(); ++i) {
    const bool read = i < 0x10 || (i >= 100 && i < 104);
    EXPECT_EQ(page[i], read ? std::byte{0xAA} : std::byte{0}) << "byte " << i;
  }
}

TEST(ReadRanges, ClearUnreadOfAPageNothingReadZeroesAll) {
  ReadRanges ranges;
  ranges.add(0x9000, 16);
  auto page = filled(4096);
  ranges.clear_unread(0x1000, page);
  for (std::byte value : page) ASSERT_EQ(value, std::byte{0});
}

TEST(ReadRanges, ARangeAtTheTopOfTheAddressSpaceSaturates) {
  ReadRanges ranges;
  ranges.add(UINT64_MAX - 10, 100);
  EXPECT_EQ(ranges.ranges().begin()->second, UINT64_MAX);
  EXPECT_EQ(ranges.pages().size(), 1u);
}

}  // namespace
}  // namespace hangpy::cpython
