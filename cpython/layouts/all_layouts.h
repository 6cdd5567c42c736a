// Every compiled layout table, and lookup by version. Adding a CPython version means adding one
// file in this folder and one line in all_layouts.cpp.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "cpython/layout.h"

namespace hangpy::cpython {

namespace layouts {
extern const Layout kPython311;
}  // namespace layouts

std::span<const Layout* const> all_layouts();

// The table for "3.11" or "3.13t"; nullptr when there is none.
const Layout* find_layout(int major, int minor, bool free_threaded);
const Layout* find_layout(std::string_view name);

}  // namespace hangpy::cpython
