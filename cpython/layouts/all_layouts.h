// Every compiled layout table, and lookup by version. Adding a CPython version means adding one
// file in this folder and one line in all_layouts.cpp.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cpython/layout.h"

namespace hangpy::cpython {

namespace layouts {
extern const Layout kPython27;
extern const Layout kPython27TraceRefs;
extern const Layout kPython36;
extern const Layout kPython37;
extern const Layout kPython37TraceRefs;
extern const Layout kPython38;
extern const Layout kPython39;
extern const Layout kPython310;
extern const Layout kPython311;
extern const Layout kPython312;
extern const Layout kPython313;
extern const Layout kPython313t;
extern const Layout kPython314;
extern const Layout kPython314t;
extern const Layout kPython315;
extern const Layout kPython315t;
}  // namespace layouts

std::span<const Layout* const> all_layouts();

// The table of a version (free-threaded or not; built with Py_TRACE_REFS or not); null when none.
const Layout* find_layout(int major, int minor, bool free_threaded, bool trace_refs = false);
// The table for "3.11", "3.13t" or "2.7d"; nullptr when there is none.
const Layout* find_layout(std::string_view name);

// "2.7, 3.6, ..., 3.14t": the names of every table, for messages that say what exists.
std::string layout_names();

// The versions the tables cover, for --version: runs of three or more consecutive minor versions
// as "A to B", free-threaded builds last: "2.7, 3.6 to 3.15, 3.13t and 3.14t".
std::string describe_versions(std::span<const Layout* const> layouts);
std::string supported_versions();  // describe_versions(all_layouts())

}  // namespace hangpy::cpython
