// The apport .crash field parser (inputs/apport_parser.h): text fields, continuation lines,
// the base64 binary field as apport writes it (each line encoded on its own), bad input.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "inputs/apport_parser.h"

namespace hangpy::inputs {
namespace {

struct Parsed {
  std::map<std::string, std::string> fields;
  std::set<std::string> binary_fields;
  std::string binary;  // CoreDump's decoded bytes
  std::optional<Error> error;
};

// Feeds `text` in pieces of `piece` bytes, as a file read in blocks would.
Parsed parse(std::string_view text, size_t piece = 1 << 20) {
  Parsed parsed;
  ApportParser parser("CoreDump", [&parsed](std::span<const std::byte> data) -> Expected<void> {
    parsed.binary.append(reinterpret_cast<const char*>(data.data()), data.size());
    return {};
  });
  for (size_t at = 0; at < text.size() && !parsed.error; at += piece) {
    if (auto ok = parser.feed(text.substr(at, piece)); !ok) parsed.error = ok.error();
  }
  if (!parsed.error) {
    if (auto ok = parser.finish(); !ok) parsed.error = ok.error();
  }
  parsed.fields = parser.fields();
  parsed.binary_fields = parser.binary_fields();
  return parsed;
}

// "hello, " and "core!" base64-encoded one line each, with padding, as apport does.
constexpr std::string_view kReport =
    "ProblemType: Crash\n"
    "Date: Mon Nov 23 10:00:00 2026\n"
    "ExecutablePath: /usr/bin/python3.11\n"
    "ProcEnviron:\n"
    " LANG=C.UTF-8\n"
    " PATH=(custom, no user)\n"
    "CoreDump: base64\n"
    " aGVsbG8sIA==\n"
    " Y29yZSE=\n"
    "ProcMaps:\n"
    " 00400000-00401000 r--p 00000000 08:01 1 /usr/bin/python3.11\n"
    " 7ffd0000-7ffd1000 rw-p 00000000 00:00 0 [stack]\n"
    "Signal: 6\n";

TEST(ApportParser, ReadsTextFieldsAndDecodesTheCoreDump) {
  for (size_t piece : {size_t{1}, size_t{3}, size_t{7}, size_t{1} << 20}) {
    Parsed parsed = parse(kReport, piece);
    ASSERT_FALSE(parsed.error) << parsed.error->describe();
    EXPECT_EQ(parsed.fields["ProblemType"], "Crash");
    EXPECT_EQ(parsed.fields["ExecutablePath"], "/usr/bin/python3.11");
    EXPECT_EQ(parsed.fields["ProcEnviron"], "LANG=C.UTF-8\nPATH=(custom, no user)");
    EXPECT_EQ(parsed.fields["ProcMaps"],
              "00400000-00401000 r--p 00000000 08:01 1 /usr/bin/python3.11\n"
              "7ffd0000-7ffd1000 rw-p 00000000 00:00 0 [stack]");
    EXPECT_EQ(parsed.fields["Signal"], "6");
    EXPECT_EQ(parsed.binary, "hello, core!") << "piece " << piece;
    EXPECT_EQ(parsed.binary_fields, std::set<std::string>{"CoreDump"});
    EXPECT_FALSE(parsed.fields.contains("CoreDump"));
  }
}

TEST(ApportParser, SkipsOtherBinaryFieldsAndTakesALastLineWithoutNewline) {
  Parsed parsed = parse("ProblemType: Crash\nUserGroups: base64\n aGVsbG8=\nCoreDump: base64\n Y29yZSE=");
  ASSERT_FALSE(parsed.error);
  EXPECT_EQ(parsed.binary, "core!");
  EXPECT_EQ(parsed.binary_fields, (std::set<std::string>{"CoreDump", "UserGroups"}));
}

TEST(ApportParser, CarriageReturnsAreIgnored) {
  Parsed parsed = parse("ProblemType: Crash\r\nCoreDump: base64\r\n Y29yZSE=\r\n");
  ASSERT_FALSE(parsed.error);
  EXPECT_EQ(parsed.binary, "core!");
}

TEST(ApportParser, BadInputIsOneError) {
  struct Case {
    std::string_view text;
    std::string_view words;
  };
  for (const Case& each : std::vector<Case>{
           {"ProblemType: Crash\nCoreDump: base64\n Y29y*ZSE=\n", "not base64"},
           {"ProblemType: Crash\nCoreDump: base64\n Y29yZS\n", "multiple of 4"},
           {"ProblemType: Crash\nCoreDump: base64\n =29yZSE\n", "misplaced '='"},
           {"ProblemType: Crash\nCoreDump: base64\n Y2==ZSE=\n", "not base64"},
           {" continuation first\n", "before any field"},
           {"ProblemType: Crash\nno colon here\n", "not a 'Name: value' field"},
           {"ProblemType: Crash\n\x01binary: x\n", "not an apport field"},
       }) {
    Parsed parsed = parse(each.text);
    ASSERT_TRUE(parsed.error) << each.text;
    EXPECT_EQ(parsed.error->kind, ErrorKind::kInvalidInput);
    EXPECT_NE(parsed.error->message.find(each.words), std::string::npos) << parsed.error->message;
    EXPECT_EQ(parsed.error->message.find('\n'), std::string::npos);
  }
}

TEST(ApportParser, TextFieldsAreBounded) {
  std::string text = "ProblemType: Crash\nProcMaps:\n";
  const std::string line = " " + std::string(1000, 'x') + "\n";
  while (text.size() < kMaxApportTextField + 10 * line.size()) text += line;
  Parsed parsed = parse(text);
  ASSERT_FALSE(parsed.error);
  EXPECT_LE(parsed.fields["ProcMaps"].size(), kMaxApportTextField + 1);
}

}  // namespace
}  // namespace hangpy::inputs
