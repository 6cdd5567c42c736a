// Native stacks as a snapshot core records them (symbols::kSnapshotNativeNoteType): the frames an
// unwinder found while the binaries were at hand, with their symbols, so that a snapshot read on
// a machine without those binaries gives the same diagnosis ("blocked on" a DDP reducer, a
// pthread mutex, a libgomp barrier) and the same --native frames where they were recorded.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "native/native_frame.h"

namespace hangpy::native {

// Encoding (little-endian): per stack, the LWP (8 bytes), a flags byte (1: an end reason
// follows), the end reason as a NUL-ended string when flagged, the frame count (4 bytes); per
// frame pc, sp, offset, module_offset (8 bytes each), a byte of FrameHow, a byte of flags
// (1: inlined), then module and symbol, each NUL-ended.
std::vector<std::byte> encode_native_stacks(const std::vector<NativeStack>& stacks);

// The stacks of a note a core gives: nullopt when it does not follow the encoding (cut short, a
// string without its NUL, an unknown FrameHow, more frames than the note has bytes for).
std::optional<std::vector<NativeStack>> decode_native_stacks(std::span<const std::byte> desc);

}  // namespace hangpy::native
