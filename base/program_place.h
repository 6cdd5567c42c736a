// Where a stack is, in the user's words: the innermost line of the program's own code and the
// function it calls there ("`all_reduce` at train.py:88"). One rule for every layer that says it:
// a thread's verdict (diagnosis/) and a process's (triage/).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hangpy {

// A Python frame as the rule needs it.
struct PlaceFrame {
  std::string_view function;
  std::string_view file;
  std::optional<int> line;
};

// A file of the standard library or an installed package (lib/pythonX.Y, site-packages,
// dist-packages, frozen modules): not where the user looks first.
bool is_library_file(std::string_view path);

std::string_view base_name(std::string_view path);

// Whether this frame is where a multiprocessing child forked from its parent starts its own life
// (BaseProcess._bootstrap): the frames outside it are its parent's, inherited through fork.
bool starts_forked_child(std::string_view function, std::string_view file);

// Indexes into `frames` (Python frames, OUTERMOST first): `line_of` is the innermost frame
// outside the libraries, `function_of` the function it calls there (the next frame in, library or
// not, passing over decorators' closures), or itself when it is innermost; both the innermost
// frame when all are library frames. In a multiprocessing child forked from its parent only the
// frames from BaseProcess._bootstrap in count: those outside it are the parent's, inherited
// through fork. nullopt for no frames.
struct PlaceIndexes {
  size_t line_of = 0;
  size_t function_of = 0;
};
std::optional<PlaceIndexes> program_place(std::span<const PlaceFrame> frames);

// "`all_reduce` at train.py:88" (the file by its base name), "`f` at line 3 of code run by exec
// or -c", "`futex_wait` in libc.so.6" (no line), "`f`" (no file).
std::string format_place(std::string_view function, std::string_view file, std::optional<int> line);

}  // namespace hangpy
