// Names for the pcs of a libdwfl walk: the ELF symbol (.symtab, .dynsym, or the MiniDebugInfo
// .gnu_debugdata table, which elfutils reads itself when built with lzma; a separate debug file's
// .symtab when libdwfl finds one), optionally (with DWARF asked for) the source line and the
// functions inlined at that pc with their call sites, and how each frame was found.
//
// Cost: a symbol lookup needs only a module's symbol table, but the inlined functions need its
// DWARF, which libdw reads (and inflates, when compressed) whole for every module a frame lands
// in — two orders of magnitude more than the rest of --native. So inlined frames are asked for
// (UnwinderOptions::inlined_frames), and every answer is kept per pc: the threads of a hung
// process mostly share their pcs.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "native/dwfl_symbol_index.h"
#include "native/native_frame.h"

namespace hangpy::native {

// One frame as the walk saw it, before it has a name.
struct RawFrame {
  uint64_t pc = 0;
  uint64_t sp = 0;
  bool is_activation = false;  // pc is where the frame stopped, not a return address
  bool perf_trampoline = false;  // pc is in a CPython perf trampoline (named kPerfTrampolineName)
  bool after_trampoline = false;  // found by stepping over the perf trampoline before it
  bool generated_code = false;  // pc is in no module: code made at run time (a JIT's)
};


class DwflSymbolizer {
 public:
  // `dwfl` must outlive the symbolizer.
  DwflSymbolizer(Dwfl* dwfl, bool inlined_frames) : dwfl_(dwfl), inlined_frames_(inlined_frames) {}

  // The named frames of one thread, innermost first: each raw frame gives one NativeFrame,
  // preceded (with inlined frames asked for) by one inlined NativeFrame per function DWARF says
  // is inlined at its pc.
  std::vector<NativeFrame> symbolize(const std::vector<RawFrame>& raw);

  // Looks up the symbols of every frame of `walks` together before they are symbolized: a
  // module that few of those pcs land in is read once for all of them
  // (DwflSymbolIndex::find_in_one_pass) instead of being indexed whole; a module many land in
  // gets its index.
  void resolve_symbols(const std::vector<const std::vector<RawFrame>*>& walks);

 private:
  // What is known of one lookup pc, whatever frame it belongs to.
  struct PcInfo {
    bool in_module = false;  // the pc lies in a module libdwfl knows
    std::string module;
    uint64_t module_start = 0;
    std::string symbol;
    uint64_t symbol_offset = 0;  // of the lookup pc
    std::vector<std::string> inlined;  // innermost first
    // The pc's source line, then (with inlined frames) the call site of each inlined function,
    // innermost first: lines[k] belongs to the k-th frame of inlined + the frame itself.
    std::vector<std::pair<std::string, int>> lines;
    bool has_cfi = false;
  };
  const PcInfo& info(uint64_t lookup_pc);

  Dwfl* dwfl_;
  bool inlined_frames_;
  std::unordered_map<uint64_t, PcInfo> by_pc_;
  std::unordered_map<Dwfl_Module*, std::unique_ptr<DwflSymbolIndex>> symbol_indexes_;
  std::unordered_map<uint64_t, std::optional<SymbolAt>> resolved_;  // by resolve_symbols, per lookup pc
};

}  // namespace hangpy::native
