#include "cpython/line_table.h"

#include <cstdint>

namespace hangpy::cpython {
namespace {

uint8_t byte_at(std::span<const std::byte> table, size_t index) {
  return static_cast<uint8_t>(table[index]);
}

// A cursor over a location table; reads past the end yield nullopt instead of faulting.
class LocationCursor {
 public:
  explicit LocationCursor(std::span<const std::byte> table) : table_(table) {}
  bool at_end() const { return position_ >= table_.size(); }
  std::optional<uint8_t> next_byte() {
    if (at_end()) return std::nullopt;
    return byte_at(table_, position_++);
  }
  // Varints hold 6 bits per byte, least significant chunk first; bit 6 says "more follows".
  std::optional<uint64_t> varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 6) {
      auto b = next_byte();
      if (!b) return std::nullopt;
      value |= static_cast<uint64_t>(*b & 0x3f) << shift;
      if ((*b & 0x40) == 0) return value;
    }
    return std::nullopt;
  }
  // Signed varints keep the sign in the lowest bit.
  std::optional<int64_t> signed_varint() {
    auto raw = varint();
    if (!raw) return std::nullopt;
    int64_t magnitude = static_cast<int64_t>(*raw >> 1);
    return (*raw & 1) ? -magnitude : magnitude;
  }
  bool skip(size_t count) {
    if (table_.size() - position_ < count) return false;
    position_ += count;
    return true;
  }

 private:
  std::span<const std::byte> table_;
  size_t position_ = 0;
};

// Entry codes of the PEP 657 location table (Objects/locations.md in CPython 3.11).
constexpr int kCodeOneLine0 = 10;
constexpr int kCodeOneLine2 = 12;
constexpr int kCodeNoColumns = 13;
constexpr int kCodeLong = 14;
constexpr int kCodeNoLocation = 15;

// One entry's position relative to the running line: the line delta, and the end line delta
// and columns where the entry has them. nullopt when malformed.
struct EntryPosition {
  int64_t line_delta = 0;
  std::optional<int64_t> end_line_delta;  // absent: the entry has no location at all
  std::optional<int64_t> column;
  std::optional<int64_t> end_column;
};

std::optional<EntryPosition> location_entry_position(LocationCursor& cursor, int code) {
  EntryPosition entry;
  if (code == kCodeNoLocation) return entry;
  if (code == kCodeLong) {
    auto delta = cursor.signed_varint();
    auto end_delta = cursor.varint();
    auto column = cursor.varint();
    auto end_column = cursor.varint();
    if (!delta || !end_delta || !column || !end_column) return std::nullopt;
    entry.line_delta = *delta;
    entry.end_line_delta = static_cast<int64_t>(*end_delta);
    // Long entries store column + 1, so that 0 can mean "no column".
    if (*column > 0) entry.column = static_cast<int64_t>(*column) - 1;
    if (*end_column > 0) entry.end_column = static_cast<int64_t>(*end_column) - 1;
    return entry;
  }
  if (code == kCodeNoColumns) {
    auto delta = cursor.signed_varint();
    if (!delta) return std::nullopt;
    entry.line_delta = *delta;
    entry.end_line_delta = 0;
    return entry;
  }
  if (code >= kCodeOneLine0 && code <= kCodeOneLine2) {
    auto column = cursor.next_byte();
    auto end_column = cursor.next_byte();
    if (!column || !end_column) return std::nullopt;
    entry.line_delta = code - kCodeOneLine0;
    entry.end_line_delta = 0;
    entry.column = *column;
    entry.end_column = *end_column;
    return entry;
  }
  // Short forms (codes 0-9): the same line; the column's high bits are the code, its low 3 bits
  // and the length sit in the second byte.
  auto second = cursor.next_byte();
  if (!second) return std::nullopt;
  entry.end_line_delta = 0;
  entry.column = code * 8 + ((*second >> 4) & 0x07);
  entry.end_column = *entry.column + (*second & 0x0f);
  return entry;
}

std::optional<int> to_int(std::optional<int64_t> value) {
  if (!value || *value < INT32_MIN || *value > INT32_MAX) return std::nullopt;
  return static_cast<int>(*value);
}

}  // namespace

std::optional<SourcePosition> position_from_location_table(std::span<const std::byte> table,
                                                           int first_line, int64_t byte_offset) {
  const int64_t target_unit = byte_offset / 2;  // entries count 2-byte code units
  LocationCursor cursor(table);
  int64_t line = first_line;
  int64_t start = 0;
  while (!cursor.at_end()) {
    uint8_t first = *cursor.next_byte();
    if ((first & 0x80) == 0) return std::nullopt;  // every entry starts with the high bit set
    int code = (first >> 3) & 0x0f;
    int64_t length = (first & 0x07) + 1;
    auto entry = location_entry_position(cursor, code);
    if (!entry) return std::nullopt;
    line += entry->line_delta;
    if (target_unit >= start && target_unit < start + length) {
      SourcePosition position;
      if (!entry->end_line_delta) return position;  // no location
      position.line = to_int(line);
      position.end_line = to_int(line + *entry->end_line_delta);
      position.column = to_int(entry->column);
      position.end_column = to_int(entry->end_column);
      return position;
    }
    start += length;
  }
  return std::nullopt;
}

std::optional<int> line_from_lnotab(std::span<const std::byte> table, int first_line,
                                    int64_t byte_offset, bool signed_increments) {
  int64_t line = first_line;
  int64_t address = 0;
  for (size_t i = 0; i + 1 < table.size(); i += 2) {
    address += byte_at(table, i);
    if (address > byte_offset) break;
    uint8_t increment = byte_at(table, i + 1);
    line += signed_increments ? static_cast<int8_t>(increment) : increment;
  }
  return static_cast<int>(line);
}

std::optional<int> line_from_linetable_310(std::span<const std::byte> table, int first_line,
                                           int64_t byte_offset) {
  constexpr int8_t kNoLine = -128;
  int64_t line = first_line;
  int64_t start = 0;
  for (size_t i = 0; i + 1 < table.size(); i += 2) {
    int64_t end = start + byte_at(table, i);
    auto line_delta = static_cast<int8_t>(byte_at(table, i + 1));
    if (line_delta != kNoLine) line += line_delta;
    if (byte_offset >= start && byte_offset < end) {
      if (line_delta == kNoLine) return std::nullopt;
      return static_cast<int>(line);
    }
    start = end;
  }
  return std::nullopt;
}

std::optional<int> line_from_location_table(std::span<const std::byte> table, int first_line,
                                            int64_t byte_offset) {
  auto position = position_from_location_table(table, first_line, byte_offset);
  if (!position) return std::nullopt;
  return position->line;
}

std::optional<int> line_for_offset(LineTableKind kind, std::span<const std::byte> table,
                                   int first_line, int64_t byte_offset, bool lnotab_signed) {
  switch (kind) {
    case LineTableKind::kLnotab:
      return line_from_lnotab(table, first_line, byte_offset, lnotab_signed);
    case LineTableKind::kLineTable310:
      return line_from_linetable_310(table, first_line, byte_offset);
    case LineTableKind::kLocationTable:
      return line_from_location_table(table, first_line, byte_offset);
  }
  return std::nullopt;
}

}  // namespace hangpy::cpython
