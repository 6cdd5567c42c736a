#include "triage/frame_locals.h"


namespace hangpy::triage {
FrameLocals::FrameLocals(std::initializer_list<Entry> entries)
    : entries_(std::make_shared<const Entries>(entries)) {}

const FrameLocals::Entries& FrameLocals::entries() const {
  static const Entries kNone;
  return entries_ ? *entries_ : kNone;
}

}  // namespace hangpy::triage
