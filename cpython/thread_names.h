// Python thread names (threading.Thread.name) by thread id, read the way threading keeps them:
// sys.modules['threading']._active maps each thread's ident to its Thread, whose _name is the
// name (_Thread__name in Python 2's name mangling).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "cpython/address_space.h"
#include "cpython/layout.h"

namespace hangpy::cpython {

// Empty when the process has not imported threading or the layout cannot say.
std::unordered_map<uint64_t, std::string> read_thread_names(const AddressSpace& memory,
                                                            const Layout& layout,
                                                            uint64_t interpreter);

}  // namespace hangpy::cpython
