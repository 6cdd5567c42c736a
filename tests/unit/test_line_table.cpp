// The line-table decoders against tables and per-instruction lines written by real interpreters
// (scripts/make-line-table-data.py, run with pyenv's 2.7 and 3.6 to 3.13).
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cpython/line_table.h"

using hangpy::cpython::LineTableKind;
using hangpy::cpython::line_for_offset;

namespace {

std::vector<std::byte> from_hex(const std::string& hex) {
  std::vector<std::byte> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(static_cast<std::byte>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

LineTableKind kind_of(const std::string& name) {
  if (name == "location") return LineTableKind::kLocationTable;
  if (name == "linetable310") return LineTableKind::kLineTable310;
  return LineTableKind::kLnotab;
}

class LineTableFromInterpreter : public ::testing::TestWithParam<std::string> {};

TEST_P(LineTableFromInterpreter, EveryInstructionHasTheInterpretersLine) {
  std::filesystem::path path =
      std::filesystem::path(HANGPY_TEST_DATA_DIR) / "line_tables" / GetParam();
  std::ifstream stream(path);
  ASSERT_TRUE(stream) << path;
  auto data = nlohmann::json::parse(stream);
  LineTableKind kind = kind_of(data["kind"]);
  bool lnotab_signed = data["lnotab_signed"];
  size_t checked = 0;
  for (const auto& code : data["codes"]) {
    auto table = from_hex(code["table"]);
    int first_line = code["first_line"];
    for (const auto& entry : code["lines"]) {
      int64_t offset = entry[0];
      std::optional<int> expected;
      if (!entry[1].is_null()) expected = entry[1].get<int>();
      auto line = line_for_offset(kind, table, first_line, offset, lnotab_signed);
      ASSERT_EQ(line, expected) << code["name"] << " at byte " << offset << " in "
                                << data["version"];
      ++checked;
    }
  }
  EXPECT_GT(checked, 300u);
}

INSTANTIATE_TEST_SUITE_P(Versions, LineTableFromInterpreter,
                         ::testing::Values("py27.json", "py36.json", "py37.json", "py38.json",
                                           "py39.json", "py310.json", "py311.json", "py312.json",
                                           "py313.json"),
                         [](const auto& param_info) {
                           return param_info.param.substr(0, param_info.param.find('.'));
                         });

// 3.11 on: line, end line and columns of every code unit as co_positions() gave them.
class PositionsFromInterpreter : public ::testing::TestWithParam<std::string> {};

std::optional<int> optional_int(const nlohmann::json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<int>();
}

TEST_P(PositionsFromInterpreter, EveryCodeUnitHasTheInterpretersPosition) {
  std::filesystem::path path =
      std::filesystem::path(HANGPY_TEST_DATA_DIR) / "line_tables" / GetParam();
  std::ifstream stream(path);
  ASSERT_TRUE(stream) << path;
  auto data = nlohmann::json::parse(stream);
  size_t checked = 0, with_columns = 0, spanning = 0, wide = 0;
  for (const auto& code : data["codes"]) {
    auto table = from_hex(code["table"]);
    int first_line = code["first_line"];
    ASSERT_TRUE(code.contains("positions")) << code["name"];
    for (const auto& entry : code["positions"]) {
      int64_t offset = entry[0];
      auto position = hangpy::cpython::position_from_location_table(table, first_line, offset);
      ASSERT_TRUE(position) << code["name"] << " at byte " << offset;
      const std::string where =
          fmt::format("{} at byte {} in {}", code["name"].get<std::string>(), offset,
                      data["version"].get<std::string>());
      ASSERT_EQ(position->line, optional_int(entry[1])) << where;
      ASSERT_EQ(position->end_line, optional_int(entry[2])) << where;
      ASSERT_EQ(position->column, optional_int(entry[3])) << where;
      ASSERT_EQ(position->end_column, optional_int(entry[4])) << where;
      ++checked;
      if (position->column) ++with_columns;
      if (position->line && position->end_line != position->line) ++spanning;
      if (position->end_column > 255) ++wide;  // only the long form holds these
    }
  }
  EXPECT_GT(checked, 1000u);
  EXPECT_GT(with_columns, 500u);
  EXPECT_GT(spanning, 0u);
  EXPECT_GT(wide, 0u);
}

INSTANTIATE_TEST_SUITE_P(Versions, PositionsFromInterpreter,
                         ::testing::Values("py311.json", "py312.json", "py313.json"),
                         [](const auto& param_info) {
                           return param_info.param.substr(0, param_info.param.find('.'));
                         });

TEST(LineTable, MalformedLocationTableGivesNoLine) {
  std::vector<std::byte> garbage = {std::byte{0x01}, std::byte{0x02}};  // no high bit: not an entry
  EXPECT_EQ(line_for_offset(LineTableKind::kLocationTable, garbage, 10, 0), std::nullopt);
  std::vector<std::byte> cut = {std::byte{0xf0}};  // a long entry with its varints missing
  EXPECT_EQ(line_for_offset(LineTableKind::kLocationTable, cut, 10, 0), std::nullopt);
}

TEST(LineTable, EmptyTablesNeverFault) {
  std::vector<std::byte> empty;
  EXPECT_EQ(line_for_offset(LineTableKind::kLnotab, empty, 7, 100), 7);
  EXPECT_EQ(line_for_offset(LineTableKind::kLineTable310, empty, 7, 100), std::nullopt);
  EXPECT_EQ(line_for_offset(LineTableKind::kLocationTable, empty, 7, 100), std::nullopt);
}

}  // namespace
