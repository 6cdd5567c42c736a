// The engine's AddressSpace over a gdb inferior: live process and core alike, read through gdb
// (gdb.Inferior.read_memory), so whatever gdb can read (core segments, then the mapped files for
// pages a core left out) the engine can read. Read-only: nothing is ever written.
//
// Reads go by 4 KiB page and pages are kept for the life of this object (one gdb stop: see
// analysis_cache.h), because one Python call into gdb costs far more than copying a page and the
// walker reads many small fields from the same pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "cpython/address_space.h"
#include "gdbplugin/python_ref.h"

namespace hangpy::gdbplugin {

class GdbMemory final : public cpython::AddressSpace {
 public:
  // `inferior` is a gdb.Inferior; it must stay the selected one while this object is used.
  explicit GdbMemory(PyRef inferior);

  // Fails with kUnmapped (gdb could not read the page) or, once the user pressed Ctrl-C,
  // kInvalidInput "interrupted" for every later read, so that any walk ends quickly.
  Expected<void> read(uint64_t address, std::span<std::byte> out) const override;

  // True once Ctrl-C was seen during a read; the caller re-raises KeyboardInterrupt.
  bool interrupted() const { return interrupted_; }
  // Records a Ctrl-C seen elsewhere (symbol lookups, thread lists): later reads fail at once.
  void mark_interrupted() const { interrupted_ = true; }
  size_t gdb_reads() const { return gdb_reads_; }

 private:
  using Page = std::optional<std::vector<std::byte>>;  // nullopt: gdb could not read it
  const Page& page(uint64_t page_address) const;
  // Reads straight from gdb, no cache; false when gdb cannot read all of it.
  bool read_from_gdb(uint64_t address, std::span<std::byte> out) const;
  void check_for_interrupt() const;

  PyRef read_memory_;  // the bound method inferior.read_memory
  mutable std::unordered_map<uint64_t, Page> pages_;
  mutable bool interrupted_ = false;
  mutable size_t gdb_reads_ = 0;
};

}  // namespace hangpy::gdbplugin
