#include "triage/place.h"

#include "base/program_place.h"

namespace hangpy::triage {

std::optional<Place> place_of(const std::vector<Frame>& stack) {
  std::vector<size_t> python;  // indices of the Python frames, outermost first
  std::vector<PlaceFrame> frames;
  for (size_t i = 0; i < stack.size(); ++i) {
    if (stack[i].kind != Frame::Kind::kPython) continue;
    python.push_back(i);
    frames.push_back({stack[i].function, stack[i].file, stack[i].line});
  }
  if (python.empty()) {
    if (stack.empty()) return std::nullopt;
    const Frame& innermost = stack.back();
    return Place{innermost.function, innermost.file, std::nullopt};
  }
  const PlaceIndexes place = *program_place(frames);
  const Frame& own = stack[python[place.line_of]];
  return Place{stack[python[place.function_of]].function, own.file, own.line};
}

std::string format_place(const Place& place) {
  return hangpy::format_place(place.function, place.file, place.line);
}

}  // namespace hangpy::triage
