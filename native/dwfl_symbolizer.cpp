#include "native/dwfl_symbolizer.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

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

// The functions inlined at `pc`, innermost first; empty without DWARF.
std::vector<std::string> inlined_functions(Dwfl_Module* module, uint64_t pc) {
  std::vector<std::string> names;
  Dwarf_Addr bias = 0;
  Dwarf_Die* unit = dwfl_module_addrdie(module, pc, &bias);
  if (unit == nullptr) return names;
  Dwarf_Die* scopes = nullptr;
  const int count = dwarf_getscopes(unit, pc - bias, &scopes);
  if (count <= 0) return names;
  std::unique_ptr<Dwarf_Die, FreeDeleter> owned(scopes);
  for (int i = 0; i < count; ++i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag == DW_TAG_subprogram) break;  // the function the code really belongs to
    if (tag == DW_TAG_inlined_subroutine) names.push_back(die_name(&scopes[i]));
  }
  return names;
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
  if (inlined_frames_) known.inlined = inlined_functions(module, pc);
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
    const uint64_t pc = lookup_pc(raw[i]);
    const PcInfo& known = info(pc);
    if (known.in_module) {
      frame.module = known.module;
      frame.module_offset = raw[i].pc - known.module_start;
    }
    if (!known.symbol.empty()) {
      frame.symbol = known.symbol;
      frame.offset = known.symbol_offset + (raw[i].pc - pc);
    }
    for (const std::string& inlined : known.inlined) {
      NativeFrame virtual_frame = frame;
      virtual_frame.symbol = inlined;
      virtual_frame.offset = 0;
      virtual_frame.inlined = true;
      frames.push_back(std::move(virtual_frame));
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

}  // namespace hangpy::native
