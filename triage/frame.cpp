#include "triage/frame.h"

namespace hangpy::triage {

const FrameList::Frames& FrameList::frames() const {
  static const Frames kNone;
  return frames_ ? *frames_ : kNone;
}

FrameList::Frames& FrameList::own() {
  if (!frames_) frames_ = std::make_shared<Frames>();
  else if (frames_.use_count() > 1) frames_ = std::make_shared<Frames>(*frames_);
  return *frames_;
}

}  // namespace hangpy::triage
