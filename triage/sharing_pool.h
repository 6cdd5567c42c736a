// The frames and frames' values met so far in a triage, by content, so that every record holding
// the same ones shares one copy (frame.h, frame_locals.h say why); safe to use from the threads
// that parse.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "triage/frame.h"
#include "triage/frame_locals.h"

namespace hangpy::triage {

class SharingPool {
 public:
  FrameLocals intern(FrameLocals::Entries&& entries);
  FrameList intern(FrameList::Frames&& frames);

  // How many distinct frames' values and stacks it holds (tests).
  size_t distinct_locals() const;
  size_t distinct_stacks() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_multimap<size_t, std::shared_ptr<const FrameLocals::Entries>> locals_;
  std::unordered_multimap<size_t, std::shared_ptr<FrameList::Frames>> stacks_;
};

}  // namespace hangpy::triage
