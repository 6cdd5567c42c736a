#include "base/program_place.h"

#include <fmt/format.h>

namespace hangpy {
// multiprocessing's child starts its own life in BaseProcess._bootstrap, called from the fork in
// Popen._launch: the frames outside it are its parent's, inherited through fork (the parent's
// `p.start()` line), not where the child is.
bool starts_forked_child(std::string_view function, std::string_view file) {
  return (function == "_bootstrap" || function.ends_with("._bootstrap")) &&
         file.ends_with("/multiprocessing/process.py");
}

bool is_library_file(std::string_view path) {
  return path.find("/lib/python") != std::string_view::npos ||
         path.find("/site-packages/") != std::string_view::npos ||
         path.find("/dist-packages/") != std::string_view::npos || path.starts_with("<frozen");
}

std::string_view base_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::optional<PlaceIndexes> program_place(std::span<const PlaceFrame> frames) {
  if (frames.empty()) return std::nullopt;
  size_t first = 0;  // the outermost frame that is the process's own
  for (size_t i = 0; i < frames.size(); ++i)
    if (starts_forked_child(frames[i].function, frames[i].file)) first = i;
  for (size_t k = frames.size(); k-- > first;) {
    if (is_library_file(frames[k].file)) continue;
    if (k + 1 == frames.size()) return PlaceIndexes{k, k};
    // Decorators put closures between the call and the function called (torch's collectives
    // run inside `_exception_logger.<locals>.wrapper`): name the first frame in that is not one.
    size_t called = k + 1;
    for (size_t j = k + 1; j < frames.size(); ++j) {
      if (frames[j].function.find("<locals>") == std::string_view::npos) {
        called = j;
        break;
      }
    }
    return PlaceIndexes{k, called};
  }
  return PlaceIndexes{frames.size() - 1, frames.size() - 1};
}

std::string format_place(std::string_view function, std::string_view file, std::optional<int> line) {
  // Code with no file of its own ("<string>": exec, python -c; "<stdin>") has no name a user
  // would search for.
  if (file == "<string>" && line)
    return fmt::format("`{}` at line {} of code run by exec or -c", function, *line);
  if (file == "<stdin>" && line)
    return fmt::format("`{}` at line {} of code read from standard input", function, *line);
  if (line) return fmt::format("`{}` at {}:{}", function, base_name(file), *line);
  if (file.empty()) return fmt::format("`{}`", function);
  return fmt::format("`{}` in {}", function, base_name(file));
}

}  // namespace hangpy
