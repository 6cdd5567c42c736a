#include "native/dwfl_symbolizer.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>

namespace hangpy::native {
namespace {

struct FreeDeleter {
  void operator()(void* pointer) const { std::free(pointer); }
};

// The address to look a frame up at: a return address points after the call, possibly at the
// first byte of the next function (or past a noreturn call's function), so its caller is looked
// up one byte earlier, as every debugger does.
uint64_t lookup_pc(const RawFrame& frame) {
  return frame.is_activation || frame.pc == 0 ? frame.pc : frame.pc - 1;
}

// Whether libdwfl had call-frame information to unwind from `pc`; without it, elfutils' x86-64
// backend falls back to the frame pointer. Same order as elfutils' frame_unwind.c: .eh_frame,
// then .debug_frame.
bool has_cfi_at(Dwfl_Module* module, uint64_t pc) {
  if (module == nullptr) return false;
  for (auto* get_cfi : {dwfl_module_eh_cfi, dwfl_module_dwarf_cfi}) {
    Dwarf_Addr bias = 0;
    Dwarf_CFI* cfi = get_cfi(module, &bias);
    if (cfi == nullptr) continue;
    Dwarf_Frame* frame = nullptr;
    if (dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) {
      std::free(frame);
      return true;
    }
  }
  return false;
}

// The linkage (mangled) name where DWARF has one, so that it demangles like a symbol, else the
// plain name; both followed through DW_AT_abstract_origin/DW_AT_specification.
std::string die_name(Dwarf_Die* die) {
  for (int attribute : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
    Dwarf_Attribute value;
    if (dwarf_attr_integrate(die, attribute, &value) == nullptr) continue;
    if (const char* name = dwarf_formstring(&value)) return name;
  }
  return "??";
}

// The source line of `pc` from the line table of the module's DWARF (the module's own, or a
// separate debug file libdwfl finds by build-id or debug link on this machine; the debuginfod
// client is asked only when DEBUGINFOD_URLS names a server). Without DWARF, libdwfl's search
// for it is a few stat calls per module, made once.
std::optional<std::pair<std::string, int>> source_line(Dwfl_Module* module, uint64_t pc) {
  Dwfl_Line* line = dwfl_module_getsrc(module, pc);
  if (line == nullptr) return std::nullopt;
  int number = 0;
  const char* file = dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr);
  if (file == nullptr || number <= 0) return std::nullopt;
  return std::pair<std::string, int>(file, number);
}

// The file DW_AT_call_file names, through the unit's file table.
std::string call_file(Dwarf_Die* inlined, Dwarf_Die* unit) {
  Dwarf_Attribute attribute;
  Dwarf_Word index = 0;
  if (dwarf_attr(inlined, DW_AT_call_file, &attribute) == nullptr || dwarf_formudata(&attribute, &index) != 0)
    return {};
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_getsrcfiles(unit, &files, &count) != 0 || index >= count) return {};
  const char* name = dwarf_filesrc(files, index, nullptr, nullptr);
  return name ? name : std::string();
}

struct Inlined {
  std::vector<std::string> names;                         // innermost first
  std::vector<std::pair<std::string, int>> call_sites;  // where each was called from
};

// The functions inlined at `pc`, innermost first, with their call sites; empty without DWARF.
Inlined inlined_functions(Dwfl_Module* module, uint64_t pc) {
  Inlined inlined;
  Dwarf_Addr bias = 0;
  Dwarf_Die* unit = dwfl_module_addrdie(module, pc, &bias);
  if (unit == nullptr) return inlined;
  Dwarf_Die* scopes = nullptr;
  const int count = dwarf_getscopes(unit, pc - bias, &scopes);
  if (count <= 0) return inlined;
  std::unique_ptr<Dwarf_Die, FreeDeleter> owned(scopes);
  for (int i = 0; i < count; ++i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag == DW_TAG_subprogram) break;  // the function the code really belongs to
    if (tag != DW_TAG_inlined_subroutine) continue;
    inlined.names.push_back(die_name(&scopes[i]));
    Dwarf_Attribute attribute;
    Dwarf_Word line = 0;
    if (dwarf_attr(&scopes[i], DW_AT_call_line, &attribute) == nullptr || dwarf_formudata(&attribute, &line) != 0)
      line = 0;
    inlined.call_sites.emplace_back(call_file(&scopes[i], unit), static_cast<int>(line));
  }
  return inlined;
}

}  // namespace

const DwflSymbolizer::PcInfo& DwflSymbolizer::info(uint64_t pc) {
  auto [it, inserted] = by_pc_.try_emplace(pc);
  PcInfo& known = it->second;
  if (!inserted) return known;
  Dwfl_Module* module = dwfl_addrmodule(dwfl_, pc);
  if (module == nullptr) return known;
  known.in_module = true;
  known.has_cfi = has_cfi_at(module, pc);
  if (const char* name = dwfl_module_info(module, nullptr, &known.module_start, nullptr, nullptr,
                                          nullptr, nullptr, nullptr))
    known.module = name;
  std::optional<SymbolAt> symbol;
  if (auto resolved = resolved_.find(pc); resolved != resolved_.end()) {
    symbol = resolved->second;
  } else {
    auto [index, created] = symbol_indexes_.try_emplace(module);
    if (created) index->second = std::make_unique<DwflSymbolIndex>(module);
    symbol = index->second->find(pc);
  }
  if (symbol) {
    known.symbol = symbol->name;
    known.symbol_offset = symbol->offset;
  }
  // lines[0]: the pc's own line, in the innermost function (inlined or not); lines[k]: the call
  // site of the (k-1)-th inlined function, in the function that inlined it. Only when DWARF is
  // asked for (--inlined): a -dbg package's debug info, inflated to find one line table, made
  // --native on a small core 150 ms instead of 5 (scripts/bench).
  if (!inlined_frames_) return known;
  const auto own_line = source_line(module, pc);
  known.lines.push_back(own_line.value_or(std::pair<std::string, int>{}));
  if (own_line) {
    Inlined inlined = inlined_functions(module, pc);
    known.inlined = std::move(inlined.names);
    for (auto& site : inlined.call_sites) known.lines.push_back(std::move(site));
  }
  return known;
}

// Up to this many pcs in one module are looked up in one pass over its symbols; more get the
// index, whose build costs about a pass and a sort, and whose lookups are binary searches.
constexpr size_t kMaxOnePassPcs = 256;

void DwflSymbolizer::resolve_symbols(const std::vector<const std::vector<RawFrame>*>& walks) {
  std::unordered_map<Dwfl_Module*, std::vector<uint64_t>> pcs_by_module;
  for (const std::vector<RawFrame>* walk : walks) {
    for (const RawFrame& frame : *walk) {
      const uint64_t pc = lookup_pc(frame);
      if (by_pc_.contains(pc) || resolved_.contains(pc)) continue;
      Dwfl_Module* module = dwfl_addrmodule(dwfl_, pc);
      if (module != nullptr && !symbol_indexes_.contains(module)) pcs_by_module[module].push_back(pc);
    }
  }
  for (auto& [module, pcs] : pcs_by_module) {
    std::sort(pcs.begin(), pcs.end());
    pcs.erase(std::unique(pcs.begin(), pcs.end()), pcs.end());
    if (pcs.size() > kMaxOnePassPcs) continue;  // info() builds the index
    const std::vector<std::optional<SymbolAt>> found = DwflSymbolIndex::find_in_one_pass(module, pcs);
    for (size_t i = 0; i < pcs.size(); ++i) resolved_.emplace(pcs[i], found[i]);
  }
}

std::vector<NativeFrame> DwflSymbolizer::symbolize(const std::vector<RawFrame>& raw) {
  std::vector<NativeFrame> frames;
  frames.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    NativeFrame frame;
    frame.pc = raw[i].pc;
    frame.sp = raw[i].sp;
    // A frame was found by the CFI of its callee's pc, else by the frame pointer.
    if (i > 0) frame.how = info(lookup_pc(raw[i - 1])).has_cfi ? FrameHow::kCfi : FrameHow::kFramePointer;
    if (raw[i].after_trampoline) frame.how = FrameHow::kTrampoline;
    const uint64_t pc = lookup_pc(raw[i]);
    const PcInfo& known = info(pc);
    if ((raw[i].perf_trampoline || raw[i].generated_code) && !known.in_module) {
      frame.symbol = raw[i].perf_trampoline ? kPerfTrampolineName : kGeneratedCodeName;
      frames.push_back(std::move(frame));
      continue;
    }
    if (known.in_module) {
      frame.module = known.module;
      frame.module_offset = raw[i].pc - known.module_start;
    }
    if (!known.symbol.empty()) {
      frame.symbol = known.symbol;
      frame.offset = known.symbol_offset + (raw[i].pc - pc);
    }
    for (size_t k = 0; k < known.inlined.size(); ++k) {
      NativeFrame virtual_frame = frame;
      virtual_frame.symbol = known.inlined[k];
      virtual_frame.offset = 0;
      virtual_frame.inlined = true;
      if (k < known.lines.size()) std::tie(virtual_frame.source_file, virtual_frame.source_line) = known.lines[k];
      frames.push_back(std::move(virtual_frame));
    }
    if (known.inlined.size() < known.lines.size())
      std::tie(frame.source_file, frame.source_line) = known.lines[known.inlined.size()];
    frames.push_back(std::move(frame));
  }
  return frames;
}

}  // namespace hangpy::native
