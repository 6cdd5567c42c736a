// Python thread names (threading.Thread.name) by thread id, read the way threading keeps them:
// sys.modules['threading']._active maps each thread's ident to its Thread, whose _name is the
// name (_Thread__name in Python 2's name mangling).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "cpython/address_space.h"
#include "cpython/layout.h"
#include "cpython/stacks.h"

namespace hangpy::cpython {

// The threading.Thread object of each thread threading knows (threading._active), by ident.
// Empty when the process has not imported threading or the layout cannot say. The threading
// module's globals come from a frame running threading.py code, else from an outermost frame's
// `threading` global (a script that imported it), else from sys.modules: cheapest first, as
// sys.modules means reading every module's name.
std::unordered_map<uint64_t, uint64_t> read_thread_objects(const AddressSpace& memory,
                                                           const Layout& layout,
                                                           uint64_t interpreter,
                                                           const std::vector<PythonThread>& threads);

// The names (threading.Thread.name) of Thread objects read_thread_objects found, by ident.
std::unordered_map<uint64_t, std::string> names_of_thread_objects(
    const AddressSpace& memory, const Layout& layout, const std::unordered_map<uint64_t, uint64_t>& objects);

}  // namespace hangpy::cpython
