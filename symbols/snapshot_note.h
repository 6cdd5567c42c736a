// The note that makes a snapshot core (coreanalyze --snapshot) self-contained: the symbol
// addresses the analysis needed, so that reading the snapshot needs none of the original
// binaries. Written by coreanalyze's snapshot writer; read by coreanalyze's core target and by
// the gdb plugin (gdb has no binaries for a snapshot either).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "symbols/elf_file.h"

namespace hangpy::symbols {

inline constexpr const char* kSnapshotNoteName = "HANGPY";
inline constexpr uint32_t kSnapshotSymbolsNoteType = 0x48505901;
// The process's rank labels (RANK, SLURM_PROCID...: the variables cpython::is_label_variable
// keeps), "NAME=value" strings each ended by a NUL. A snapshot keeps no page of the environment
// on purpose (it may hold secrets), so without this a triage of snapshot cores would not know
// the ranks, or know some of them, by the pages argv happened to share with them.
inline constexpr uint32_t kSnapshotLabelsNoteType = 0x48505902;

// The native stacks the analysis unwound (native/recorded_stacks.h): the threads --native printed,
// or those the diagnosis needed them for. A snapshot keeps no binary, so without them its
// diagnosis would fall back to "a system call" where the original said "DDP's all_reduce".
inline constexpr uint32_t kSnapshotNativeNoteType = 0x48505903;

// When the snapshot's look was taken: Unix time in nanoseconds, then for each thread whose CPU
// time was known its id and CPU time in nanoseconds (all 8-byte little-endian), so that two
// snapshots of a job can be compared later (coreanalyze diff) on any machine.
inline constexpr uint32_t kSnapshotLookNoteType = 0x48505904;

// The pipe ends the process held (cpython::PipeEnd): for each, its descriptor, the pipe's inode
// and 1 for a read end or 0 for a write end, 8-byte little-endian words (targets/pipe_ends.h).
// A core holds no descriptor table; with this, a triage of snapshot cores alone still knows who
// could read the pipe a process blocks writing to.
inline constexpr uint32_t kSnapshotPipesNoteType = 0x48505905;

// The connected TCP sockets the process held (cpython::SocketEnd): "FD LOCAL REMOTE" lines.
inline constexpr uint32_t kSnapshotSocketsNoteType = 0x48505906;

// A process in another PID namespace than its reader's (cpython::NamespacePid): its own PIDs and
// its children's in both namespaces, pairs of 8-byte little-endian words (targets/namespace_pids.h).
// Its wait4(6) names a child the host calls 23128; a snapshot must say so as the live read did.
inline constexpr uint32_t kSnapshotNamespacePidsNoteType = 0x48505907;

using SnapshotSymbols = std::map<std::string, uint64_t>;

// Encoding: for each symbol, its 8-byte little-endian address, then its NUL-terminated name.
std::vector<std::byte> encode_snapshot_symbols(const SnapshotSymbols& symbols);
// nullopt when `desc` does not follow that encoding (cut short, a name without its NUL).
std::optional<SnapshotSymbols> decode_snapshot_symbols(std::span<const std::byte> desc);

bool is_snapshot_symbols_note(const ElfNote& note);

// The symbols recorded in the core file at `path`; nullopt when it carries no snapshot note (an
// ordinary core). Errors: those of ElfFile::open and ElfFile::notes(), kCorrupt when the note
// cannot be decoded.
Expected<std::optional<SnapshotSymbols>> read_snapshot_symbols(const std::string& path);

}  // namespace hangpy::symbols
