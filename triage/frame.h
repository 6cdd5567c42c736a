// One frame of a stack as the triage compares it, and a thread's Python frames held once for
// every rank whose thread is in the same frames (sharing_pool.h).
//
// Why shared: a fleet's ranks stand in the same few stacks; a rank's nine frames cost 1.3 KB
// (their strings and the vector), 130 MB of a 100,000-rank triage, for a handful of distinct
// stacks.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hangpy::triage {

struct Frame {
  enum class Kind { kPython, kNative };
  Kind kind = Kind::kPython;
  std::string function;     // Python: co_qualname; native: the demangled symbol, or "??"
  std::string file;         // Python: the source file; native: the module, as the core names it
  std::optional<int> line;  // Python only
  // How many more times the same frame follows it in a recursion the document folded ("repeated"):
  // part of what the frame is, so that stacks of different depths stay apart.
  uint64_t repeated = 0;
  bool operator==(const Frame&) const = default;
};

// A vector of frames read like one (and handed to what takes one); copying it shares the frames.
// The few writers (a parse, tests building records) copy them first where they are shared.
class FrameList {
 public:
  using Frames = std::vector<Frame>;

  FrameList() = default;
  FrameList(std::initializer_list<Frame> frames) : frames_(std::make_shared<Frames>(frames)) {}
  explicit FrameList(std::shared_ptr<Frames> shared) : frames_(std::move(shared)) {}

  const Frames& frames() const;
  operator const Frames&() const { return frames(); }  // NOLINT: read as the vector it stands for
  Frames::const_iterator begin() const { return frames().begin(); }
  Frames::const_iterator end() const { return frames().end(); }
  Frames::const_reverse_iterator rbegin() const { return frames().rbegin(); }
  Frames::const_reverse_iterator rend() const { return frames().rend(); }
  size_t size() const { return frames().size(); }
  bool empty() const { return frames().empty(); }
  const Frame& at(size_t i) const { return frames().at(i); }
  const Frame& operator[](size_t i) const { return frames()[i]; }
  const Frame& front() const { return frames().front(); }
  const Frame& back() const { return frames().back(); }
  bool operator==(const FrameList& other) const {
    return frames_ == other.frames_ || frames() == other.frames();
  }

  void push_back(Frame frame) { own().push_back(std::move(frame)); }
  Frame& edit(size_t i) { return own().at(i); }
  void reserve(size_t count) { own().reserve(count); }

 private:
  Frames& own();  // the frames, copied first where another list shares them
  std::shared_ptr<Frames> frames_;  // null: none
};

}  // namespace hangpy::triage
