// ContainerReader::dict_items on the dicts of real processes: the corpus's snapshot cores (each
// frame's globals, the interpreter's sys.__dict__ and sys.modules; a DDP rank's too), read as
// they are and read through a view of the same memory that refuses every read longer than a
// pointer. The reader takes a page of entries in one read and falls back to one entry at a time
// where that read fails, so the view forces the entry-by-entry reading every version used to do:
// both must give the same items. With a page of the entry table made unreadable, both must also
// agree (the same items up to it, or the same failure).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "cpython/analyzer.h"
#include "cpython/container_reader.h"
#include "cpython/object_reader.h"
#include "corpus_core.h"
#include "targets/core_target.h"

using namespace hangpy;

namespace {

// The same memory, with reads longer than `longest` bytes, and reads that touch the page at
// `missing_page` (when set), refused as a core that did not save them refuses them.
class RefusingMemory final : public cpython::AddressSpace {
 public:
  RefusingMemory(const cpython::AddressSpace& inner, size_t longest, std::optional<uint64_t> missing_page = {})
      : inner_(inner), longest_(longest), missing_page_(missing_page) {}
  Expected<void> read(uint64_t address, std::span<std::byte> out) const override {
    if (out.size() > longest_) return make_error(ErrorKind::kNotSaved, "refused: too long", address);
    if (missing_page_ && !out.empty() && address / 4096 <= *missing_page_ &&
        (address + out.size() - 1) / 4096 >= *missing_page_)
      return make_error(ErrorKind::kNotSaved, "refused: missing page", *missing_page_ * 4096);
    return inner_.read(address, out);
  }

 private:
  const cpython::AddressSpace& inner_;
  size_t longest_;
  std::optional<uint64_t> missing_page_;
};

using Items = Expected<std::vector<std::pair<uint64_t, uint64_t>>>;

Items items_through(const cpython::AddressSpace& memory, const cpython::Layout& layout, uint64_t dict) {
  const cpython::ObjectReader objects(memory, layout);
  return cpython::ContainerReader(objects).dict_items(dict);
}

// Where the first entry's key of a 3.6+ dict lies (its keys object's entry table), for a missing
// page inside the table; nullopt for 2.7's open table.
std::optional<uint64_t> a_page_of_the_entries(const cpython::AddressSpace& memory, const cpython::Layout& layout,
                                              uint64_t dict, const std::vector<std::pair<uint64_t, uint64_t>>& items) {
  if (layout.variables.dict_model == cpython::DictModel::kOpenTable || items.size() < 2) return std::nullopt;
  // The middle item's key pointer is stored in the entry table: find the page holding it by
  // searching the keys object from its start (bounded: 1,500 entries of 24 bytes).
  auto keys = cpython::read_pointer(memory, dict + static_cast<uint64_t>(layout.variables.dict_keys));
  if (!keys) return std::nullopt;
  const uint64_t wanted = items[items.size() / 2].first;
  for (uint64_t at = *keys; at < *keys + (uint64_t{1} << 20); at += 8) {
    auto word = cpython::read_pointer(memory, at);
    if (!word) return std::nullopt;
    if (*word == wanted) return at / 4096;
  }
  return std::nullopt;
}

class DictItemsOfProcesses : public ::testing::TestWithParam<const char*> {};

TEST_P(DictItemsOfProcesses, APageAtATimeGivesWhatEntryByEntryGives) {
  const test_support::CorpusCore opened = test_support::open_corpus_core(GetParam());
  if (!opened.skip.empty()) GTEST_SKIP() << opened.skip;
  ASSERT_TRUE(opened.target) << opened.error;
  const targets::CoreTarget* target = opened.target.get();
  auto stacks = cpython::analyze(*target, {});
  ASSERT_TRUE(stacks) << stacks.error().describe();
  const cpython::Layout& layout = *stacks->layout;
  const cpython::AddressSpace& memory = target->memory();
  const cpython::ObjectReader objects(memory, layout);
  const cpython::ContainerReader containers(objects);

  // The dicts: every frame's globals, sys.__dict__ and sys.modules.
  std::set<uint64_t> dicts;
  for (const cpython::PythonThread& thread : stacks->threads) {
    for (const cpython::PythonFrame& frame : thread.frames) {
      if (layout.variables.frame_globals == cpython::kAbsent) break;
      auto globals = cpython::read_pointer(memory, frame.address + static_cast<uint64_t>(layout.variables.frame_globals));
      if (globals && *globals != 0) dicts.insert(*globals);
    }
  }
  // sys.__dict__ and sys.modules, where the snapshot kept them (its analysis read sys.modules
  // only where no frame runs threading's code: the DDP rank).
  uint64_t modules = 0;
  if (layout.interpreter.sysdict != cpython::kAbsent) {
    const uint64_t interpreter = stacks->threads.front().interpreter;
    auto sysdict = cpython::read_pointer(memory, interpreter + static_cast<uint64_t>(layout.interpreter.sysdict));
    if (sysdict && *sysdict != 0 && containers.dict_items(*sysdict)) {
      dicts.insert(*sysdict);
      if (auto found = containers.dict_get(*sysdict, "modules"); found && *found != 0) {
        modules = *found;
        dicts.insert(modules);
        // threading's globals, which the analysis found there (no frame of the rank runs it).
        if (auto threading = containers.dict_get(modules, "threading"); threading && *threading != 0) {
          auto globals = cpython::read_pointer(memory, *threading + static_cast<uint64_t>(layout.variables.module_dict));
          if (globals && *globals != 0) dicts.insert(*globals);
        }
      }
    }
  }
  ASSERT_FALSE(dicts.empty());

  const RefusingMemory one_entry_at_a_time(memory, 8);
  size_t compared = 0, with_missing_page = 0;
  for (uint64_t dict : dicts) {
    const Items whole = items_through(memory, layout, dict);
    const Items by_entry = items_through(one_entry_at_a_time, layout, dict);
    ASSERT_EQ(whole.has_value(), by_entry.has_value()) << "dict 0x" << std::hex << dict;
    if (!whole) continue;
    EXPECT_EQ(*whole, *by_entry) << "dict 0x" << std::hex << dict;
    ++compared;
    if (auto page = a_page_of_the_entries(memory, layout, dict, *whole)) {
      const RefusingMemory missing(memory, SIZE_MAX, page);
      const RefusingMemory missing_by_entry(memory, 8, page);
      const Items cut = items_through(missing, layout, dict);
      const Items cut_by_entry = items_through(missing_by_entry, layout, dict);
      ASSERT_EQ(cut.has_value(), cut_by_entry.has_value()) << "dict 0x" << std::hex << dict;
      EXPECT_FALSE(cut.has_value()) << "a page of the entries is missing, and the items were read";
      if (cut) {
        EXPECT_EQ(*cut, *cut_by_entry);
      }
      ++with_missing_page;
    }
  }
  EXPECT_GE(compared, 2u);
  if (layout.variables.dict_model != cpython::DictModel::kOpenTable) {
    EXPECT_GE(with_missing_page, 1u);
  }

  // What must be there: threading's globals, whose _active the analysis named the threads by
  // (a frame's globals, or through sys.modules' "threading").
  bool active_found = false;
  for (uint64_t dict : dicts) {
    auto active = containers.dict_get(dict, "_active");
    active_found = active_found || (active && *active != 0);
  }
  EXPECT_TRUE(active_found) << "no dict of the process holds threading's _active";
}

INSTANTIATE_TEST_SUITE_P(Corpus, DictItemsOfProcesses,
                         ::testing::Values("pyenv-2.7/deadlock.core.zst", "pyenv-3.6/deadlock.core.zst",
                                           "pyenv-3.8/deadlock.core.zst", "pyenv-3.11/deadlock.core.zst",
                                           "pyenv-3.12/deadlock.core.zst", "pyenv-3.13/deadlock.core.zst",
                                           "local-3.13t/deadlock.core.zst", "sid-3.14/deadlock.core.zst",
                                           "jobs/ddp-uneven-debian-3.11/rank0.core.zst"),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                           std::string name = param.param;
                           name = name.substr(0, name.find(".core"));
                           for (char& c : name) if (c == '-' || c == '.' || c == '/') c = '_';
                           return name;
                         });

}  // namespace
