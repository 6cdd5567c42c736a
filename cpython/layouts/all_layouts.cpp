#include "cpython/layouts/all_layouts.h"

#include <array>

namespace hangpy::cpython {

std::span<const Layout* const> all_layouts() {
  static const std::array<const Layout*, 1> kTables = {
      &layouts::kPython311,
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

}  // namespace hangpy::cpython
