#include "base/printable.h"

#include <gtest/gtest.h>

namespace hangpy {
namespace {

// A path a target opened may hold anything: a terminal must never receive its control bytes.
TEST(Printable, ControlCharactersAreEscapedAndTheLengthBounded) {
  EXPECT_EQ(printable("/tmp/fifo.1"), "/tmp/fifo.1");
  EXPECT_EQ(printable("a\x1b[31mb\nc\\"), "a\\x1b[31mb\\x0ac\\x5c");
  EXPECT_EQ(printable("abcdef", 3), "abc...");
}

}  // namespace
}  // namespace hangpy
