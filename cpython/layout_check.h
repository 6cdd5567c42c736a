// Whether a layout table fits a target, whatever chose it (detection or --python): the interpreter
// list must be readable, thread states must point back at their interpreter, and frames must run
// code objects. A wrong table fails these long before it would print a wrong stack.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cpython/layout.h"
#include "cpython/runtime_locator.h"
#include "cpython/target.h"

namespace hangpy::cpython {

struct LayoutFit {
  uint64_t runtime = 0;            // the address of the layout's runtime symbol
  uint64_t first_interpreter = 0;  // the head of the interpreter list
  std::string runtime_found_by;    // see RuntimeLocation
};

// Errors: kNotFound (no runtime symbol, no interpreter yet) and kCorrupt (the layout does not fit,
// with the first reason found). `located`: where the runtime was already found for a layout with
// the same runtime symbol (finding it may mean a search of the data: done once per analysis).
Expected<LayoutFit> check_layout(const Target& target, const Layout& layout,
                                 const std::optional<RuntimeLocation>& located = std::nullopt);

// The names of every compiled layout that fits the target ("3.11"), for the mismatch message.
std::vector<std::string> fitting_layouts(const Target& target);

}  // namespace hangpy::cpython
