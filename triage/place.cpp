#include "triage/place.h"

#include <fmt/format.h>

namespace hangpy::triage {

std::string_view base_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_library_file(std::string_view path) {
  return path.find("/lib/python") != std::string_view::npos ||
         path.find("/site-packages/") != std::string_view::npos ||
         path.find("/dist-packages/") != std::string_view::npos || path.starts_with("<frozen");
}

namespace {

// multiprocessing's child starts its own life in BaseProcess._bootstrap, called from the fork in
// Popen._launch: the frames outside it are its parent's, inherited through fork (the parent's
// `p.start()` line), not where the child is.
bool starts_forked_child(const Frame& frame) {
  const std::string_view function(frame.function);
  return (function == "_bootstrap" || function.ends_with("._bootstrap")) &&
         std::string_view(frame.file).ends_with("/multiprocessing/process.py");
}

}  // namespace

std::optional<Place> place_of(const std::vector<Frame>& stack) {
  std::vector<size_t> python;  // indices of the Python frames, outermost first
  for (size_t i = 0; i < stack.size(); ++i) {
    if (stack[i].kind != Frame::Kind::kPython) continue;
    if (starts_forked_child(stack[i])) python.clear();  // the parent's frames are not its place
    python.push_back(i);
  }
  if (python.empty()) {
    if (stack.empty()) return std::nullopt;
    const Frame& innermost = stack.back();
    return Place{innermost.function, innermost.file, std::nullopt};
  }
  for (size_t k = python.size(); k-- > 0;) {
    const Frame& own = stack[python[k]];
    if (is_library_file(own.file)) continue;
    if (k + 1 == python.size()) return Place{own.function, own.file, own.line};
    // Decorators put closures between the call and the function called (torch's collectives
    // run inside `_exception_logger.<locals>.wrapper`): name the first frame in that is not one.
    size_t called = python[k + 1];
    for (size_t j = k + 1; j < python.size(); ++j) {
      if (stack[python[j]].function.find("<locals>") == std::string::npos) {
        called = python[j];
        break;
      }
    }
    return Place{stack[called].function, own.file, own.line};
  }
  const Frame& innermost = stack[python.back()];
  return Place{innermost.function, innermost.file, innermost.line};
}

std::string format_place(const Place& place) {
  // Code with no file of its own ("<string>": exec, python -c; "<stdin>") has no name a user
  // would search for.
  if (place.file == "<string>" && place.line)
    return fmt::format("`{}` at line {} of code run by exec or -c", place.function, *place.line);
  if (place.file == "<stdin>" && place.line)
    return fmt::format("`{}` at line {} of code read from standard input", place.function, *place.line);
  if (place.line) return fmt::format("`{}` at {}:{}", place.function, base_name(place.file), *place.line);
  if (place.file.empty()) return fmt::format("`{}`", place.function);
  return fmt::format("`{}` in {}", place.function, base_name(place.file));
}

}  // namespace hangpy::triage
