// The two ways the native symbolizer names a pc without libdwfl's own per-call scan of the whole
// symbol table (native/dwfl_symbol_index.h): the index and the one pass over a few pcs. Both must
// answer as dwfl_module_addrinfo does (but for pcs in data objects, which they leave out), on real
// libraries of this machine: libc (a .symtab with locals, weak aliases and sizeless labels),
// python3.11 (a big executable; with python3.11-dbg, a separate debug file's .symtab) and
// libtorch_cpu (35,000 .dynsym entries), at pcs inside, at the start of, between and past their
// functions. Both read the table raw where it is libdwfl's own (native/raw_symbol_table.h), and
// these libraries must be such tables.
#include <elfutils/libdwfl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "native/dwfl_symbol_index.h"
#include "native/raw_symbol_table.h"

using namespace hangpy;

namespace {

const Dwfl_Callbacks kOffline = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, dwfl_offline_section_address,
                                 nullptr};

struct Answer {
  bool found = false;
  std::string name;
  uint64_t offset = 0;
  bool operator==(const Answer&) const = default;
};

Answer from(const std::optional<native::SymbolAt>& symbol) {
  if (!symbol) return {};
  return {true, symbol->name, symbol->offset};
}

void expect_same_answers(const char* path, size_t max_pcs = 1500) {
  if (access(path, R_OK) != 0) GTEST_SKIP() << path << " is not installed";
  Dwfl* dwfl = dwfl_begin(&kOffline);
  ASSERT_NE(dwfl, nullptr);
  Dwfl_Module* module = dwfl_report_offline(dwfl, "module", path, -1);
  ASSERT_NE(module, nullptr) << dwfl_errmsg(-1);
  dwfl_report_end(dwfl, nullptr, nullptr);
  Dwarf_Addr low = 0, high = 0;
  dwfl_module_info(module, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
  // Every function's first byte, a byte inside it and the byte before it, and random pcs.
  std::vector<uint64_t> pcs;
  std::vector<uint64_t> past_labels;
  const int count = dwfl_module_getsymtab(module);
  ASSERT_GT(count, 100);
  for (int i = 1; i < count; ++i) {
    GElf_Sym symbol;
    GElf_Addr address = 0;
    if (dwfl_module_getsym_info(module, i, &symbol, &address, nullptr, nullptr, nullptr) == nullptr) continue;
    if (address == 0) continue;
    // Just past a sizeless label (hand-written assembly): libdwfl weighs the label itself.
    if (symbol.st_size == 0 && GELF_ST_TYPE(symbol.st_info) == STT_NOTYPE)
      past_labels.insert(past_labels.end(), {address + 1, address + 64});
    if (GELF_ST_TYPE(symbol.st_info) != STT_FUNC) continue;
    pcs.insert(pcs.end(), {address, address - 1, address + symbol.st_size / 2, address + symbol.st_size});
  }
  std::mt19937_64 random(42);
  for (int i = 0; i < 2000; ++i) pcs.push_back(low + random() % (high - low));
  std::sort(pcs.begin(), pcs.end());
  pcs.erase(std::unique(pcs.begin(), pcs.end()), pcs.end());
  std::shuffle(pcs.begin(), pcs.end(), random);
  pcs.resize(std::min<size_t>(pcs.size(), max_pcs));  // addrinfo scans the table per call
  // Every pc past a label kept (there are few), in batches with the others.
  std::shuffle(past_labels.begin(), past_labels.end(), random);
  past_labels.resize(std::min<size_t>(past_labels.size(), max_pcs / 4));
  pcs.insert(pcs.end(), past_labels.begin(), past_labels.end());
  std::sort(pcs.begin(), pcs.end());
  pcs.erase(std::unique(pcs.begin(), pcs.end()), pcs.end());
  std::shuffle(pcs.begin(), pcs.end(), random);

  // The raw read is taken, and its table is the one libdwfl searches.
  const std::optional<native::RawSymbolTable> raw = native::RawSymbolTable::of(module);
  ASSERT_TRUE(raw.has_value()) << path << ": its symbol table is not read raw";
  EXPECT_EQ(raw->count(), count);

  const native::DwflSymbolIndex index(module);
  std::vector<Answer> expected(pcs.size());
  std::vector<bool> in_code(pcs.size(), true);
  size_t named = 0;
  for (size_t i = 0; i < pcs.size(); ++i) {
    GElf_Off offset = 0;
    GElf_Sym symbol;
    const char* name = dwfl_module_addrinfo(module, pcs[i], &offset, &symbol, nullptr, nullptr, nullptr);
    // A pc is in code: the lookups leave data objects out on purpose (a random pc may land in
    // one, which libdwfl names).
    if (name != nullptr && (GELF_ST_TYPE(symbol.st_info) == STT_OBJECT || GELF_ST_TYPE(symbol.st_info) == STT_TLS)) {
      in_code[i] = false;
      continue;
    }
    expected[i] = name ? Answer{true, name, offset} : Answer{};
    EXPECT_EQ(from(index.find(pcs[i])), expected[i]) << path << " pc 0x" << std::hex << pcs[i];
    named += expected[i].found;
  }
  // The one pass in batches of a few pcs, as the symbolizer asks it (one pc, a thread's few
  // frames in a module, a dozen), and of many: each batch spreads its pcs over the module
  // differently, and so the buckets its filter cuts the module into.
  for (const size_t batch_size : {size_t{1}, size_t{3}, size_t{13}, size_t{40}, size_t{300}}) {
    for (size_t at = 0; at < pcs.size(); at += batch_size) {
      std::vector<size_t> order;
      for (size_t i = at; i < std::min(pcs.size(), at + batch_size); ++i) order.push_back(i);
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pcs[a] < pcs[b]; });
      std::vector<uint64_t> batch;
      for (const size_t i : order) batch.push_back(pcs[i]);
      const auto one_pass = native::DwflSymbolIndex::find_in_one_pass(module, batch);
      ASSERT_EQ(one_pass.size(), batch.size());
      for (size_t k = 0; k < order.size(); ++k) {
        if (!in_code[order[k]]) continue;
        EXPECT_EQ(from(one_pass[k]), expected[order[k]])
            << path << " pc 0x" << std::hex << batch[k] << " in a batch of " << std::dec << batch.size();
      }
    }
  }
  EXPECT_GT(named, pcs.size() / 2);
  dwfl_end(dwfl);
}

}  // namespace

TEST(SymbolLookup, IndexAndOnePassAnswerAsLibdwflOnLibc) {
  expect_same_answers("/usr/lib/x86_64-linux-gnu/libc.so.6");
}

TEST(SymbolLookup, IndexAndOnePassAnswerAsLibdwflOnPython) {
  expect_same_answers("/usr/bin/python3.11");
}

TEST(SymbolLookup, IndexAndOnePassAnswerAsLibdwflOnLibtorch) {
  expect_same_answers("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so", 300);
}
