#include "cpython/layouts/all_layouts.h"

#include <array>

namespace hangpy::cpython {

std::span<const Layout* const> all_layouts() {
  static const std::array<const Layout*, 13> kTables = {
      &layouts::kPython27,
      &layouts::kPython36,
      &layouts::kPython37,
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
  };
  return kTables;
}

const Layout* find_layout(int major, int minor, bool free_threaded) {
  for (const Layout* layout : all_layouts()) {
    if (layout->major == major && layout->minor == minor && layout->free_threaded == free_threaded)
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

}  // namespace hangpy::cpython
