// A core's process environment, as far as a caller wants it: the strings the kernel put on the
// initial stack at exec (what the launcher set: RANK, SLURM_PROCID...), found through the auxv;
// or, where a program overwrote them (setproctitle reuses that memory for its title), the array
// libc's `environ` points to now. Every read is bounded; corrupt memory gives nothing, not a crash.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "cpython/address_space.h"

namespace hangpy::targets {

// Decides which entries are kept, by name: everything else is never copied out of the core.
using KeepVariable = std::function<bool(std::string_view name)>;

// The NAME=value entries of the initial environment whose name `keep` accepts. `auxv` is the
// core's NT_AUXV (AT_* pairs without AT_NULL). Errors (kInvalidInput, kNotSaved...) say why no
// environment was found: no AT_EXECFN, the auxv not on the stack below it, a malformed array.
Expected<std::vector<std::string>> read_initial_environment(
    const cpython::AddressSpace& memory, std::span<const std::pair<uint64_t, uint64_t>> auxv,
    const KeepVariable& keep);

// The bytes [first, second) of the initial stack that hold the environment strings (up to the
// file name AT_EXECFN points to); nothing when the initial stack cannot be read. A snapshot
// writes these bytes as zeros: the walker may read a page they share with the main thread's
// first C frames, and a snapshot holds the label variables only (its note), never the rest.
std::optional<std::pair<uint64_t, uint64_t>> initial_environment_strings(
    const cpython::AddressSpace& memory, std::span<const std::pair<uint64_t, uint64_t>> auxv);

// The same from the process's current environment: `environ_variable` is the address of libc's
// `environ` (or `__environ`), which points to a NULL-terminated array of string pointers.
Expected<std::vector<std::string>> read_environment_array(const cpython::AddressSpace& memory,
                                                          uint64_t environ_variable,
                                                          const KeepVariable& keep);

}  // namespace hangpy::targets
