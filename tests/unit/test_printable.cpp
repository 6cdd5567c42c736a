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

// Any text of a target on a terminal: C0, DEL and C1 controls and bytes that are not UTF-8 are
// written out; UTF-8 text, tabs and backslashes stay as they are.
TEST(ForTerminal, ControlsEscapedUtf8Kept) {
  EXPECT_EQ(for_terminal("\x1b]0;owned\x07\x1b[2J"), "\\x1b]0;owned\\x07\\x1b[2J");
  EXPECT_EQ(for_terminal("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x90\x8d\tx\\n"), "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x90\x8d\tx\\n");
  EXPECT_EQ(for_terminal("a\xc2\x9b" "31mb"), "a\\u009b31mb");   // C1 CSI as UTF-8
  EXPECT_EQ(for_terminal("a\x9b" "31m"), "a\\x9b31m");           // a lone C1 byte
  EXPECT_EQ(for_terminal("\xc0\xaf\xed\xa0\x80"), "\\xc0\\xaf\\xed\\xa0\\x80");  // overlong, surrogate
  EXPECT_EQ(for_terminal("\x7f"), "\\x7f");
  EXPECT_EQ(for_terminal("one\ntwo"), "one\\x0atwo");
  EXPECT_EQ(for_terminal("one\ntwo", true), "one\ntwo");
  EXPECT_EQ(for_terminal("\xe2\x9c"), "\\xe2\\x9c");  // cut short
}

TEST(ForTerminal, JsonKeepsItsMeaning) {
  EXPECT_EQ(json_for_terminal("{\"a\": \"x\xc2\x9by\xc3\xa9\"}"), "{\"a\": \"x\\u009by\xc3\xa9\"}");
}

}  // namespace
}  // namespace hangpy
