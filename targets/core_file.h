// An x86-64 or aarch64 Linux ELF core file: its memory segments, threads and process notes. The file is
// memory-mapped through libelf (never read whole), a large one's memory read by pread through a
// few page buffers (FilePages); every size and count from the notes is bounds-checked. A core
// truncated on disk still opens: what is missing reads as kNotSaved.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <map>
#include <utility>
#include <vector>

#include "base/error.h"
#include "cpython/target.h"
#include "symbols/elf_file.h"
#include "targets/file_pages.h"
#include "targets/machine_registers.h"

namespace hangpy::targets {

// A PT_LOAD of the core: [vaddr, vaddr + memsz) was mapped in the process, the first
// available_bytes of it are in the core file.
struct CoreSegment {
  uint64_t vaddr = 0;
  uint64_t memsz = 0;
  uint64_t file_offset = 0;
  uint64_t filesz = 0;           // what the core meant to save (clamped to memsz)
  uint32_t flags = 0;            // PF_R | PF_W | PF_X: the mapping's protection at dump time
  uint64_t available_bytes = 0;  // what the file on disk really holds (less when truncated)
};

// One NT_PRSTATUS note.
struct CoreThread {
  int64_t lwp = 0;
  int current_signal = 0;
  MachineRegisters registers{};  // all general registers (and aarch64's NT_ARM_TLS)
  std::optional<double> cpu_seconds{};  // user + system time (the kernel's cores; gcore writes 0s)
};

// One NT_FILE entry: [start, end) maps `path` from byte `file_offset` on.
struct FileMapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t file_offset = 0;  // in bytes: the note's page offset times the note's unit
  std::string path;
};

class CoreFile {
 public:
  // Errors: kIo (cannot open or map), kInvalidInput (empty, not ELF, not a core, neither x86-64
  // nor aarch64).
  static Expected<std::unique_ptr<CoreFile>> open(const std::string& path);

  // The process's machine (the core's e_machine).
  cpython::Machine machine() const { return machine_; }

  const std::string& path() const { return elf_->path(); }
  // Sorted by vaddr.
  const std::vector<CoreSegment>& segments() const { return segments_; }
  const std::vector<CoreThread>& threads() const { return threads_; }

  // NT_PRPSINFO / NT_SIGINFO facts; absent when the core lacks the note.
  std::optional<int64_t> pid() const { return pid_; }
  const std::string& command() const { return command_; }      // pr_fname
  const std::string& arguments() const { return arguments_; }  // pr_psargs
  std::optional<int> signal() const { return signal_; }
  const std::optional<cpython::SignalInfo>& signal_info() const { return signal_info_; }
  // NT_PRPSINFO's parent, owner and state; absent without the note.
  std::optional<int64_t> parent_pid() const { return parent_pid_; }
  // The pipe ends a snapshot's note records (targets/pipe_ends.h); none in an ordinary core.
  const std::vector<cpython::PipeEnd>& pipe_ends() const { return pipe_ends_; }
  const std::vector<cpython::SocketEnd>& socket_ends() const { return socket_ends_; }
  // A snapshot's note of the PIDs in its process's namespace (targets/namespace_pids.h).
  const std::vector<cpython::NamespacePid>& namespace_pids() const { return namespace_pids_; }
  std::optional<uint32_t> uid() const { return uid_; }
  std::optional<uint32_t> gid() const { return gid_; }
  std::optional<char> state() const { return state_; }
  // When a snapshot's look was taken (Unix seconds; symbols::kSnapshotLookNoteType); a kernel's or
  // gcore's core does not say.
  std::optional<double> taken_at() const { return taken_at_; }

  // NT_AUXV as (AT_* key, value) pairs, in note order, without the AT_NULL terminator.
  const std::vector<std::pair<uint64_t, uint64_t>>& auxv() const { return auxv_; }
  std::optional<uint64_t> auxv_value(uint64_t key) const;
  // The AT_EXECFN string, read from the core's memory (absent if that page was not saved).
  const std::optional<std::string>& execfn() const { return execfn_; }

  // NT_FILE, in note order (ascending addresses, as the kernel writes it).
  const std::vector<FileMapping>& file_mappings() const { return file_mappings_; }
  // For a core without NT_FILE: the mapped files as a wrapper saved them (ABRT `maps`, apport
  // ProcMaps). Ignored when the core has its own list.
  void use_saved_file_mappings(std::vector<FileMapping> mappings);
  // For a core without NT_FILE: mappings found another way (module_recovery.h), with the one
  // line that says how (none when empty). Ignored when the core has its own list.
  void use_file_mappings(std::vector<FileMapping> mappings, std::string warning);
  // Whether the notes lie past the end of a truncated core (gdb's gcore writes them last): then
  // no thread, file list, auxv or process facts are known, and no warning has said so yet.
  bool notes_cut() const { return notes_cut_; }
  // The process's memory page size: AT_PAGESZ, or 4096 when the core does not say. (NT_FILE's
  // "page size" is only the unit of its file offsets: the kernel writes 4096, gdb's gcore 1.)
  uint64_t page_size() const { return page_size_; }

  // The label variables a snapshot core carries, NUL-separated "NAME=value" entries
  // (symbols::kSnapshotLabelsNoteType); absent in other cores and older snapshots.
  const std::optional<std::string>& snapshot_labels() const { return snapshot_labels_; }
  // The native stacks a snapshot core carries, as encoded (symbols::kSnapshotNativeNoteType;
  // native/recorded_stacks.h decodes them); absent in other cores and older snapshots.
  const std::optional<std::vector<std::byte>>& snapshot_native_stacks() const {
    return snapshot_native_stacks_;
  }
  // The symbol addresses a snapshot core carries (coreanalyze --snapshot); absent in other cores.
  const std::optional<std::map<std::string, uint64_t>>& snapshot_symbols() const {
    return snapshot_symbols_;
  }

  // "the core is truncated at N of M bytes: memory from 0x... on is missing (K segments)" when the
  // file is shorter than its segments say.
  const std::optional<std::string>& truncation() const { return truncation_; }
  // "the core's notes are corrupt: ..." when a note made no sense; nullopt otherwise.
  const std::optional<std::string>& corruption() const { return corruption_; }

  // Problems found while opening that still let analysis go on (one line each).
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Memory saved in the core. Fills all of `out` or fails with the first address that could not
  // be read: kNotSaved (mapped but not in the core, or cut off by truncation) or kUnmapped (no
  // segment). On failure the bytes before that address have been filled.
  Expected<void> read(uint64_t address, std::span<std::byte> out) const;
  // read() for memory read once, such as the first page of each of hundreds of mapped files: the
  // same result, copied from the file itself, not through FilePages (ElfFile::read_file_offset_unmapped).
  Expected<void> read_once(uint64_t address, std::span<std::byte> out) const;

  // The segment containing `address`, if any.
  const CoreSegment* segment_containing(uint64_t address) const;

 private:
  explicit CoreFile(std::unique_ptr<symbols::ElfFile> elf)
      : elf_(std::move(elf)), pages_(*elf_), mapped_(pages_.mapped_image()) {}
  void read_segments();
  void read_notes();
  void read_note(const symbols::ElfNote& note);
  void read_prstatus(std::span<const std::byte> desc);
  void read_prpsinfo(std::span<const std::byte> desc);
  void read_siginfo(std::span<const std::byte> desc);
  void read_auxv(std::span<const std::byte> desc);
  void read_nt_file(std::span<const std::byte> desc);
  void take_page_size_from_auxv();
  std::optional<std::string> read_string(uint64_t address, size_t max_length) const;
  Expected<void> read_segments_at(uint64_t address, std::span<std::byte> out, bool mapped) const;

  std::unique_ptr<symbols::ElfFile> elf_;
  FilePages pages_;  // what read() copies memory from (read_once: the file itself)
  // The core's bytes where pages_ reads them from the mapping: a read inside one saved segment is
  // copied from there directly (most reads: the layers below cost 150 instructions a read).
  const FilePages::MappedImage mapped_;
  cpython::Machine machine_ = cpython::Machine::kX86_64;
  std::vector<CoreSegment> segments_;
  // segment_containing's last answer for each of kRecentRegions regions of 1 MB (by address bits
  // 20-23): reads come in runs within a few segments (the heap's arenas, a stack, libpython's
  // data), interleaved, which one last answer missed half the time.
  static constexpr size_t kRecentRegions = 16;
  mutable std::array<std::atomic<size_t>, kRecentRegions> recent_segments_{};
  std::vector<CoreThread> threads_;
  std::optional<int64_t> pid_;
  std::string command_;
  std::string arguments_;
  std::optional<int> signal_;
  std::optional<cpython::SignalInfo> signal_info_;
  std::optional<int64_t> parent_pid_;
  std::vector<cpython::PipeEnd> pipe_ends_;
  std::vector<cpython::SocketEnd> socket_ends_;
  std::vector<cpython::NamespacePid> namespace_pids_;
  std::optional<uint32_t> uid_;
  std::optional<uint32_t> gid_;
  std::optional<char> state_;
  std::optional<double> taken_at_;
  std::map<int64_t, uint64_t> recorded_cpu_ns_;  // a snapshot's look note: thread -> CPU time
  std::vector<std::pair<uint64_t, uint64_t>> auxv_;
  std::optional<std::string> execfn_;
  std::vector<FileMapping> file_mappings_;
  uint64_t page_size_ = 4096;
  std::optional<std::map<std::string, uint64_t>> snapshot_symbols_;
  std::optional<std::string> snapshot_labels_;
  std::optional<std::string> corruption_;
  std::optional<std::vector<std::byte>> snapshot_native_stacks_;
  std::optional<std::string> truncation_;
  bool notes_cut_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace hangpy::targets
