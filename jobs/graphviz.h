// Graphviz's `dot`, run as a program to turn DOT text into an SVG picture (Debian's graphviz).
#pragma once

#include <string>

#include "base/error.h"

namespace hangpy::jobs {

// Writes `dot -Tsvg` of `dot_text` to `svg_path`. Errors: dot is not installed (kNotFound, the
// message says which package has it), it failed (kIo, with its last line).
Expected<void> write_svg_with_dot(const std::string& dot_text, const std::string& svg_path);

}  // namespace hangpy::jobs
