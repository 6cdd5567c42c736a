// Symbol demangling for the formatting edge: names are stored mangled and demangled only when
// shown to a user.
#pragma once

#include <string>
#include <string_view>

namespace hangpy::symbols {

// The demangled form of an Itanium (or MSVC/Rust) mangled name; the name itself when it is not
// mangled or cannot be demangled. Never fails.
std::string demangle(std::string_view name);

}  // namespace hangpy::symbols
