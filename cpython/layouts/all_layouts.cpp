#include "cpython/layouts/all_layouts.h"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

namespace hangpy::cpython {

std::span<const Layout* const> all_layouts() {
  static const std::array<const Layout*, 16> kTables = {
      &layouts::kPython27,
      &layouts::kPython27TraceRefs,
      &layouts::kPython36,
      &layouts::kPython37,
      &layouts::kPython37TraceRefs,
      &layouts::kPython38,
      &layouts::kPython39,
      &layouts::kPython310,
      &layouts::kPython311,
      &layouts::kPython312,
      &layouts::kPython313,
      &layouts::kPython313t,
      &layouts::kPython314,
      &layouts::kPython314t,
      &layouts::kPython315,
      &layouts::kPython315t,
  };
  return kTables;
}

const Layout* find_layout(int major, int minor, bool free_threaded, bool trace_refs) {
  for (const Layout* layout : all_layouts()) {
    if (layout->major == major && layout->minor == minor && layout->free_threaded == free_threaded &&
        layout->trace_refs == trace_refs)
      return layout;
  }
  return nullptr;
}

const Layout* find_layout(std::string_view name) {
  for (const Layout* layout : all_layouts()) {
    if (layout->name == name) return layout;
  }
  return nullptr;
}

std::string layout_names() {
  std::string names;
  for (const Layout* layout : all_layouts()) {
    if (!names.empty()) names += ", ";
    names += layout->name;
  }
  return names;
}

std::string describe_versions(std::span<const Layout* const> layouts) {
  std::vector<const Layout*> sorted(layouts.begin(), layouts.end());
  // Default builds, then free-threaded ones, then Py_TRACE_REFS debug builds (2.7d, 3.7d).
  std::stable_sort(sorted.begin(), sorted.end(), [](const Layout* a, const Layout* b) {
    if (a->trace_refs != b->trace_refs) return b->trace_refs;
    if (a->free_threaded != b->free_threaded) return b->free_threaded;
    return a->major != b->major ? a->major < b->major : a->minor < b->minor;
  });
  std::vector<std::string> parts;
  for (size_t start = 0; start < sorted.size();) {
    size_t end = start + 1;  // one past the run of consecutive minors of one kind
    while (end < sorted.size() && sorted[end]->free_threaded == sorted[start]->free_threaded &&
           sorted[end]->trace_refs == sorted[start]->trace_refs &&
           sorted[end]->major == sorted[start]->major &&
           sorted[end]->minor == sorted[end - 1]->minor + 1)
      ++end;
    if (end - start >= 3) {
      parts.push_back(fmt::format("{} to {}", sorted[start]->name, sorted[end - 1]->name));
    } else {
      for (size_t i = start; i < end; ++i) parts.emplace_back(sorted[i]->name);
    }
    start = end;
  }
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) text += i + 1 == parts.size() ? " and " : ", ";
    text += parts[i];
  }
  return text;
}

std::string supported_versions() { return describe_versions(all_layouts()); }

}  // namespace hangpy::cpython
