#include "native/native_frame.h"

namespace hangpy::native {

const char* frame_how_name(FrameHow how) {
  switch (how) {
    case FrameHow::kInitial: return "initial";
    case FrameHow::kCfi: return "cfi";
    case FrameHow::kFramePointer: return "frame_pointer";
    case FrameHow::kTrampoline: return "trampoline";
  }
  return "unknown";
}

}  // namespace hangpy::native
