// Decoders from a bytecode offset to a source line, one per era of CPython's line tables.
// Pure functions over the table's bytes: no target access, unit-tested against tables and
// line numbers taken from real interpreters (tests/data/line_tables/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "cpython/layout.h"

namespace hangpy::cpython {

// The line of the instruction at `byte_offset` (in bytes from the start of the bytecode), or
// nullopt when the table says the instruction has no line or the table is malformed.
// `lnotab_signed` tells whether co_lnotab line increments are signed (3.6 on) or not (2.7).
std::optional<int> line_for_offset(LineTableKind kind, std::span<const std::byte> table,
                                   int first_line, int64_t byte_offset, bool lnotab_signed = true);

// Where in the source an instruction is, as PEP 657 location tables (3.11 on) record it: the
// values code.co_positions() yields. Columns are 0-based UTF-8 byte offsets into their line;
// each part is absent where the table records none.
struct SourcePosition {
  std::optional<int> line;
  std::optional<int> end_line;
  std::optional<int> column;
  std::optional<int> end_column;
};

// The position of the instruction at `byte_offset`; nullopt when the table is malformed or ends
// before the offset (an offset the table marks as having no location gives an empty position).
std::optional<SourcePosition> position_from_location_table(std::span<const std::byte> table,
                                                           int first_line, int64_t byte_offset);

std::optional<int> line_from_lnotab(std::span<const std::byte> table, int first_line,
                                    int64_t byte_offset, bool signed_increments);
std::optional<int> line_from_linetable_310(std::span<const std::byte> table, int first_line,
                                           int64_t byte_offset);
std::optional<int> line_from_location_table(std::span<const std::byte> table, int first_line,
                                            int64_t byte_offset);

}  // namespace hangpy::cpython
