// InstanceAttributes::get_each and get() against the instance's items read whole, name by
// name, on the threading.Thread objects of real processes: the corpus's snapshot cores of deadlock.py, one per way an instance keeps its
// attributes (Python 2's and 3.6's dict, 3.11's values array, 3.13's inline values, the
// free-threaded build's). get_each reads the instance's attributes once for several names (the
// diagnosis asks five of every object a thread's frames hold); it must answer as a plain
// search of the instance's (name, value) pairs does.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cpython/analyzer.h"
#include "cpython/instance_attributes.h"
#include "cpython/object_reader.h"
#include "cpython/thread_names.h"
#include "corpus_core.h"
#include "targets/core_target.h"

using namespace hangpy;

namespace {

class InstanceAttributesOfThreads : public ::testing::TestWithParam<const char*> {};

TEST_P(InstanceAttributesOfThreads, GetEachAnswersAsTheItemsDoNameByName) {
  const test_support::CorpusCore opened = test_support::open_corpus_core(std::string(GetParam()) + "/deadlock.core.zst");
  if (!opened.skip.empty()) GTEST_SKIP() << opened.skip;
  ASSERT_TRUE(opened.target) << opened.error;
  const targets::CoreTarget* target = opened.target.get();
  auto stacks = cpython::analyze(*target, {});
  ASSERT_TRUE(stacks) << stacks.error().describe();
  const cpython::Layout& layout = *stacks->layout;
  const cpython::ObjectReader objects(target->memory(), layout);
  const cpython::InstanceAttributes attributes(objects);

  const std::string name_attribute = layout.major == 2 ? "_Thread__name" : "_name";
  // Present, absent, present, a repeat, and one whose length matches a present one's.
  const std::vector<std::string_view> names = {name_attribute, "_no_such_attribute", "_tstate_lock",
                                               name_attribute, layout.locks.daemon_attribute, "_nome"};
  size_t named = 0;
  const auto thread_objects = cpython::read_thread_objects(target->memory(), layout,
                                                           stacks->threads.front().interpreter, stacks->threads);
  ASSERT_FALSE(thread_objects.empty());
  for (const auto& [ident, object] : thread_objects) {
    auto each = attributes.get_each(object, names);
    ASSERT_TRUE(each) << each.error().describe();
    ASSERT_EQ(each->size(), names.size());
    // The oracle: the instance's (name, value) pairs in order, each name read whole.
    auto pairs = attributes.items(object, cpython::kMaxContainerItems);
    ASSERT_TRUE(pairs) << pairs.error().describe();
    for (size_t i = 0; i < names.size(); ++i) {
      uint64_t expected = 0;
      for (const auto& [key, value] : *pairs) {
        auto text = objects.read_string(key);
        if (text && *text == names[i]) {
          expected = value;
          break;
        }
      }
      EXPECT_EQ((*each)[i], expected) << "attribute " << names[i] << " of Thread 0x" << std::hex << object;
      auto one = attributes.get(object, names[i]);
      ASSERT_TRUE(one) << names[i] << ": " << one.error().describe();
      EXPECT_EQ(*one, expected) << "get() of " << names[i];
    }
    EXPECT_EQ((*each)[1], 0u) << "an attribute no Thread has was found";
    EXPECT_EQ((*each)[5], 0u) << "an attribute no Thread has was found";
    // What must be there: the thread's name, as analyze() read it through threading.
    ASSERT_NE((*each)[0], 0u) << "Thread 0x" << std::hex << object << " has no name attribute";
    auto text = objects.read_string((*each)[0]);
    ASSERT_TRUE(text);
    for (const cpython::PythonThread& thread : stacks->threads) {
      if (thread.thread_id != ident || !thread.name) continue;
      EXPECT_EQ(*text, *thread.name);
      ++named;
    }
  }
  EXPECT_GE(named, 3u) << "deadlock.py's main thread and its two workers are named by threading";
}

INSTANTIATE_TEST_SUITE_P(Corpus, InstanceAttributesOfThreads,
                         ::testing::Values("pyenv-2.7", "pyenv-3.6", "pyenv-3.8", "pyenv-3.11", "pyenv-3.12",
                                           "pyenv-3.13", "local-3.13t", "sid-3.14"),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                           std::string name = param.param;
                           for (char& c : name) if (c == '-' || c == '.') c = '_';
                           return name;
                         });

}  // namespace
