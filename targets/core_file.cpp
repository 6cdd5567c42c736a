#include "targets/core_file.h"

#include <elf.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/procfs.h>

#include <algorithm>
#include <cstring>

#include "symbols/snapshot_note.h"
#include "targets/namespace_pids.h"
#include "targets/pipe_ends.h"
#include "targets/socket_ends.h"

namespace hangpy::targets {

// The process notes other than NT_PRSTATUS (prpsinfo, siginfo, auxv) have one layout on the
// 64-bit Linux machines hangpy reads and builds for, x86-64 and aarch64, so the C library's
// structs read them; NT_PRSTATUS's registers differ (machine_registers.h).
static_assert(sizeof(void*) == 8, "hangpy reads 64-bit cores and is built for a 64-bit machine");

namespace {

constexpr size_t kMaxExecfnLength = 4096;
// What a page size (AT_PAGESZ) can be; anything else is corruption. Huge pages do not count.
constexpr uint64_t kMinPageSize = 1024;
constexpr uint64_t kMaxPageSize = uint64_t{1} << 30;

std::string machine_name(uint16_t machine) {
  switch (machine) {
    case EM_386:
      return "i386";
    case EM_ARM:
      return "ARM";
    case EM_AARCH64:
      return "AArch64";
    case EM_PPC64:
      return "PowerPC64";
    case EM_S390:
      return "s390";
    case EM_RISCV:
      return "RISC-V";
    default:
      return fmt::format("ELF machine {}", machine);
  }
}

std::string type_description(uint16_t type) {
  switch (type) {
    case ET_EXEC:
      return "an ELF executable";
    case ET_DYN:
      return "an ELF shared object (or PIE executable)";
    case ET_REL:
      return "an ELF relocatable object";
    default:
      return fmt::format("an ELF file of type {}", type);
  }
}

template <typename T>
std::optional<T> read_struct(std::span<const std::byte> bytes, size_t offset = 0) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::string bounded_string(const char* chars, size_t capacity) {
  return std::string(chars, strnlen(chars, capacity));
}

}  // namespace

Expected<std::unique_ptr<CoreFile>> CoreFile::open(const std::string& path) {
  auto elf = symbols::ElfFile::open_by_segments(path);
  if (!elf) return std::unexpected(elf.error());
  // What the header says is checked against the file before anything is read through it: a
  // 32-bit core, or one cut inside its program header table, is told as that, not as a process
  // without Python.
  Elf64_Ehdr header{};
  if ((*elf)->file_size() >= EI_NIDENT &&
      (*elf)->read_file_offset_unmapped(0, std::as_writable_bytes(std::span(&header, 1)).first(
                                               std::min<size_t>(sizeof(header), (*elf)->file_size())))) {
    if (header.e_ident[EI_CLASS] == ELFCLASS32) {
      return make_error(ErrorKind::kInvalidInput,
                        fmt::format("{} is a 32-bit ELF file (ELFCLASS32: an i386 or x32 process); only "
                                    "64-bit x86-64 cores are read", path));
    }
    const uint64_t table_end = header.e_phoff + uint64_t{header.e_phnum} * header.e_phentsize;
    if (header.e_ident[EI_CLASS] == ELFCLASS64 && header.e_phnum != PN_XNUM && table_end > (*elf)->file_size()) {
      return make_error(ErrorKind::kInvalidInput,
                        fmt::format("{} is truncated inside its program header table: {} headers from "
                                    "offset {} need {} bytes, the file has {}", path, header.e_phnum,
                                    header.e_phoff, table_end, (*elf)->file_size()));
    }
  }
  if ((*elf)->type() != ET_CORE) {
    return make_error(ErrorKind::kInvalidInput, fmt::format("{} is {}, not a core file", path,
                                                            type_description((*elf)->type())));
  }
  const std::optional<cpython::Machine> machine = machine_of_elf((*elf)->machine());
  if (!machine) {
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("{} is a core file for {}; only x86-64 and aarch64 cores are supported",
                                  path, machine_name((*elf)->machine())));
  }
  std::unique_ptr<CoreFile> core(new CoreFile(std::move(*elf)));
  core->machine_ = *machine;
  core->read_segments();
  core->read_notes();
  core->take_page_size_from_auxv();
  if (auto execfn = core->auxv_value(AT_EXECFN)) {
    core->execfn_ = core->read_string(*execfn, kMaxExecfnLength);
  }
  return core;
}

void CoreFile::read_segments() {
  const uint64_t file_size = elf_->file_size();
  uint64_t expected_size = 0;
  std::optional<uint64_t> first_missing_address;
  size_t cut_segments = 0;
  segments_.reserve(elf_->load_segments().size());
  for (const symbols::LoadSegment& load : elf_->load_segments()) {
    if (load.memsz == 0) continue;
    if (load.vaddr > ~uint64_t{0} - load.memsz) {
      warnings_.push_back(fmt::format("core segment at 0x{:x} of size 0x{:x} wraps around; ignored",
                                      load.vaddr, load.memsz));
      continue;
    }
    CoreSegment segment{load.vaddr, load.memsz, load.file_offset, load.filesz, load.flags, 0};
    if (segment.file_offset < file_size) {
      segment.available_bytes = std::min(segment.filesz, file_size - segment.file_offset);
    }
    if (segment.filesz > 0 && segment.file_offset <= ~uint64_t{0} - segment.filesz) {
      expected_size = std::max(expected_size, segment.file_offset + segment.filesz);
    }
    // Segments come in file order, so the first short one is where the cut happened.
    if (segment.available_bytes < segment.filesz) {
      ++cut_segments;
      if (!first_missing_address) first_missing_address = segment.vaddr + segment.available_bytes;
    }
    segments_.push_back(segment);
  }
  std::sort(segments_.begin(), segments_.end(),
            [](const CoreSegment& a, const CoreSegment& b) { return a.vaddr < b.vaddr; });
  // Notes take a few MB even for thousands of threads: a note segment past the file's end by more
  // than this is a corrupt size, not a cut core.
  constexpr uint64_t kMaxPlausibleNoteBytes = 256 << 20;
  if (elf_->notes_end() > file_size && elf_->notes_end() - file_size > kMaxPlausibleNoteBytes) {
    corruption_ = fmt::format("the core's notes are corrupt: its note segment claims to end at byte {}, "
                              "past the {}-byte file by more than any notes take",
                              elf_->notes_end(), file_size);
    warnings_.push_back(*corruption_);
  } else {
    expected_size = std::max(expected_size, elf_->notes_end());
  }
  if (!corruption_ && !first_missing_address && elf_->notes_end() > file_size) {
    // Cut inside or before the notes only (gcore writes them last): all memory is there.
    truncation_ = fmt::format("the core is truncated at {} of {} bytes: its notes are cut off, "
                              "its memory is whole",
                              file_size, expected_size);
    warnings_.push_back(*truncation_);
  }
  if (first_missing_address) {
    truncation_ = fmt::format("the core is truncated at {} of {} bytes: memory from 0x{:x} on is "
                              "missing ({} segment{})",
                              file_size, expected_size, *first_missing_address, cut_segments,
                              cut_segments == 1 ? "" : "s");
    warnings_.push_back(*truncation_);
  }
}

void CoreFile::read_notes() {
  auto notes = elf_->notes();
  if (!notes && truncation_) {
    // gdb's gcore writes the notes after the memory: a cut core loses them first. The target
    // says so in one line, with what it recovered instead (module_recovery.h).
    notes_cut_ = true;
    return;
  }
  if (!notes) {
    warnings_.push_back(
        fmt::format("cannot read the core's notes (no threads or mapped files "
                    "known): {}",
                    notes.error().message));
    return;
  }
  for (const symbols::ElfNote& note : *notes) read_note(note);
  for (CoreThread& thread : threads_) {
    if (auto recorded = recorded_cpu_ns_.find(thread.lwp); recorded != recorded_cpu_ns_.end())
      thread.cpu_seconds = static_cast<double>(recorded->second) / 1e9;
  }
  if (const auto& corrupt = elf_->corrupt_notes()) {
    corruption_ = "the core's notes are corrupt: " + *corrupt;
    warnings_.push_back(*corruption_);
  }
  if (threads_.empty()) warnings_.push_back("core has no thread (NT_PRSTATUS) notes");
}

void CoreFile::read_note(const symbols::ElfNote& note) {
  if (note.name == symbols::kSnapshotNoteName && note.type == symbols::kSnapshotLabelsNoteType) {
    snapshot_labels_ = std::string(reinterpret_cast<const char*>(note.desc.data()), note.desc.size());
    return;
  }
  if (note.name == symbols::kSnapshotNoteName && note.type == symbols::kSnapshotLookNoteType) {
    // Unix time in ns, then (thread id, CPU time in ns) pairs; a note of another size is ignored.
    const auto u64_at = [&](size_t index) {
      uint64_t value = 0;
      std::memcpy(&value, note.desc.data() + index * 8, 8);
      return value;
    };
    if (note.desc.size() < 8 || note.desc.size() % 16 != 8) return;
    taken_at_ = static_cast<double>(u64_at(0)) / 1e9;
    for (size_t pair = 0; pair < note.desc.size() / 16; ++pair)
      recorded_cpu_ns_[static_cast<int64_t>(u64_at(1 + 2 * pair))] = u64_at(2 + 2 * pair);
    return;
  }
  if (note.name == symbols::kSnapshotNoteName && note.type == symbols::kSnapshotPipesNoteType) {
    pipe_ends_ = decode_pipe_ends(note.desc);
    return;
  }
  if (note.name == symbols::kSnapshotNoteName && note.type == symbols::kSnapshotNamespacePidsNoteType) {
    namespace_pids_ = decode_namespace_pids(note.desc);
    return;
  }
  if (note.name == symbols::kSnapshotNoteName && note.type == symbols::kSnapshotSocketsNoteType) {
    socket_ends_ = decode_socket_ends(note.desc);
    return;
  }
  if (note.name == symbols::kSnapshotNoteName && note.type == symbols::kSnapshotNativeNoteType) {
    snapshot_native_stacks_.emplace(note.desc.begin(), note.desc.end());
    return;
  }
  if (symbols::is_snapshot_symbols_note(note)) {
    snapshot_symbols_ = symbols::decode_snapshot_symbols(note.desc);
    if (!snapshot_symbols_) warnings_.push_back("snapshot symbol note is corrupt; ignored");
    return;
  }
  if (note.name == "LINUX" && note.type == kNoteArmTls && machine_ == cpython::Machine::kAarch64) {
    // Follows its thread's NT_PRSTATUS, as the kernel writes each thread's notes together.
    if (!threads_.empty() && note.desc.size() >= 8) std::memcpy(&threads_.back().registers.arm_tls, note.desc.data(), 8);
    return;
  }
  if (note.name != "CORE") return;  // other "LINUX" notes hold FPU/xstate, which we do not need
  switch (note.type) {
    case NT_PRSTATUS:
      read_prstatus(note.desc);
      break;
    case NT_PRPSINFO:
      read_prpsinfo(note.desc);
      break;
    case NT_SIGINFO:
      read_siginfo(note.desc);
      break;
    case NT_AUXV:
      read_auxv(note.desc);
      break;
    case NT_FILE:
      read_nt_file(note.desc);
      break;
    default:
      break;
  }
}

void CoreFile::read_prstatus(std::span<const std::byte> desc) {
  const size_t words = MachineRegisters::word_count(machine_);
  const size_t needed = sizeof(PrstatusHeader) + words * 8;
  auto status = read_struct<PrstatusHeader>(desc);
  if (!status || desc.size() < needed) {
    warnings_.push_back(
        fmt::format("NT_PRSTATUS note of {} bytes is too short (need {}); thread "
                    "skipped",
                    desc.size(), needed));
    return;
  }
  CoreThread thread;
  thread.lwp = status->pid;
  thread.current_signal = status->current_signal;
  // gcore leaves the times 0: then they are unknown, not "never ran".
  const auto seconds = [](const int64_t (&time)[2]) { return static_cast<double>(time[0]) + static_cast<double>(time[1]) / 1e6; };
  const double cpu = seconds(status->user_time) + seconds(status->system_time);
  if (cpu > 0 && cpu < 1e12) thread.cpu_seconds = cpu;
  thread.registers.machine = machine_;
  std::memcpy(thread.registers.words.data(), desc.data() + sizeof(PrstatusHeader), words * 8);
  threads_.push_back(thread);
}

void CoreFile::read_prpsinfo(std::span<const std::byte> desc) {
  auto info = read_struct<elf_prpsinfo>(desc);
  if (!info) return;
  pid_ = info->pr_pid;
  // The kernel and gdb's gcore always fill in the state letter. qemu-user's cores leave it 0 but
  // give the parent and owner; a note with neither was rebuilt by an older hangpy snapshot, which
  // kept only the pid and the names: the rest is unknown.
  const bool has_state = info->pr_sname > ' ' && info->pr_sname < 127;
  if (!has_state && info->pr_ppid == 0) return;
  if (has_state) state_ = info->pr_sname;
  parent_pid_ = info->pr_ppid;
  uid_ = info->pr_uid;
  gid_ = info->pr_gid;
  command_ = bounded_string(info->pr_fname, sizeof(info->pr_fname));
  arguments_ = bounded_string(info->pr_psargs, sizeof(info->pr_psargs));
  while (!arguments_.empty() && arguments_.back() == ' ') arguments_.pop_back();
}

// The note holds the kernel's siginfo as the dumping thread received it; which union member is
// valid follows from si_code (sent by a process) and the signal (faults carry an address).
void CoreFile::read_siginfo(std::span<const std::byte> desc) {
  auto signo = read_struct<int32_t>(desc);
  if (!signo) return;
  signal_ = *signo;
  auto info = read_struct<siginfo_t>(desc);
  if (!info) return;  // an old or cut note: the number alone
  cpython::SignalInfo signal;
  signal.number = info->si_signo;
  signal.code = info->si_code;
  if (info->si_code <= 0) {  // SI_USER, SI_QUEUE, SI_TKILL, ...: a process sent it
    // No process has PID 0: a zero sender is a note that kept only the signal number (older
    // hangpy snapshots), and the sender is unknown.
    if (info->si_pid != 0) {
      signal.sender_pid = info->si_pid;
      signal.sender_uid = info->si_uid;
    }
  } else if (info->si_signo == SIGSEGV || info->si_signo == SIGBUS || info->si_signo == SIGILL ||
             info->si_signo == SIGFPE) {
    signal.fault_address = reinterpret_cast<uint64_t>(info->si_addr);
  }
  signal_info_ = signal;
}

void CoreFile::read_auxv(std::span<const std::byte> desc) {
  for (size_t offset = 0; offset + 16 <= desc.size(); offset += 16) {
    const uint64_t key = *read_struct<uint64_t>(desc, offset);
    if (key == AT_NULL) break;
    auxv_.emplace_back(key, *read_struct<uint64_t>(desc, offset + 8));
  }
}

// Layout: count, unit, count x {start, end, page_offset}, then count NUL-terminated paths; a
// mapping starts at byte page_offset * unit of its file. The kernel's unit is its page size, but
// gdb's gcore writes 1 (and byte offsets), so the unit says nothing about the memory's pages.
void CoreFile::read_nt_file(std::span<const std::byte> desc) {
  const auto count = read_struct<uint64_t>(desc, 0);
  const auto unit = read_struct<uint64_t>(desc, 8);
  if (!count || !unit) return;
  if (*unit == 0 || (*unit & (*unit - 1)) != 0) {
    warnings_.push_back(
        fmt::format("NT_FILE note has a bad page size {}; mapped files ignored", *unit));
    return;
  }
  constexpr uint64_t kEntrySize = 24;
  if (*count > (desc.size() - 16) / kEntrySize) {
    warnings_.push_back(
        fmt::format("NT_FILE note claims {} entries but holds at most {}; "
                    "mapped files ignored",
                    *count, (desc.size() - 16) / kEntrySize));
    return;
  }
  size_t string_offset = 16 + *count * kEntrySize;
  file_mappings_.reserve(file_mappings_.size() + static_cast<size_t>(*count));  // bounded above
  for (uint64_t i = 0; i < *count; ++i) {
    const size_t entry = 16 + i * kEntrySize;
    const uint64_t start = *read_struct<uint64_t>(desc, entry);
    const uint64_t end = *read_struct<uint64_t>(desc, entry + 8);
    const uint64_t page_offset = *read_struct<uint64_t>(desc, entry + 16);
    const char* chars = reinterpret_cast<const char*>(desc.data()) + string_offset;
    const size_t length = strnlen(chars, desc.size() - string_offset);
    if (string_offset + length >= desc.size()) {
      warnings_.push_back(fmt::format("NT_FILE note ends after {} of {} paths", i, *count));
      return;
    }
    const std::string_view path(chars, length);
    string_offset += length + 1;
    if (page_offset > ~uint64_t{0} / *unit) {
      warnings_.push_back(fmt::format("NT_FILE maps {} from beyond 2^64 bytes; ignored", path));
      continue;
    }
    // The path made once, in place (assigned into an empty mapping it cost twice as much: a
    // torch rank's note lists ~1,600 mappings).
    if (end > start) file_mappings_.push_back(FileMapping{start, end, page_offset * *unit, std::string(path)});
  }
}

void CoreFile::use_saved_file_mappings(std::vector<FileMapping> mappings) {
  if (!file_mappings_.empty() || mappings.empty()) return;
  const size_t count = mappings.size();
  use_file_mappings(std::move(mappings),
                    fmt::format("the core lists no mapped files (NT_FILE); using the {} mappings "
                                "its wrapper saved (/proc/PID/maps)",
                                count));
}

void CoreFile::use_file_mappings(std::vector<FileMapping> mappings, std::string warning) {
  if (!file_mappings_.empty()) return;
  file_mappings_ = std::move(mappings);
  if (!warning.empty()) warnings_.push_back(std::move(warning));
}

void CoreFile::take_page_size_from_auxv() {
  const auto page_size = auxv_value(AT_PAGESZ);
  if (!page_size) return;  // keep the default
  if (*page_size < kMinPageSize || *page_size > kMaxPageSize ||
      (*page_size & (*page_size - 1)) != 0) {
    warnings_.push_back(fmt::format("AT_PAGESZ is {}, not a page size; assuming {}", *page_size,
                                    page_size_));
    return;
  }
  page_size_ = *page_size;
}

std::optional<uint64_t> CoreFile::auxv_value(uint64_t key) const {
  for (const auto& [entry_key, value] : auxv_) {
    if (entry_key == key) return value;
  }
  return std::nullopt;
}

const CoreSegment* CoreFile::segment_containing(uint64_t address) const {
  // Reads come in runs within a few segments: the last one found in the address's region is tried first.
  std::atomic<size_t>& recent = recent_segments_[(address >> 20) % kRecentRegions];
  const size_t last = recent.load(std::memory_order_relaxed);
  if (last < segments_.size() && address - segments_[last].vaddr < segments_[last].memsz &&
      address >= segments_[last].vaddr)
    return &segments_[last];
  auto it = std::upper_bound(segments_.begin(), segments_.end(), address,
                             [](uint64_t a, const CoreSegment& s) { return a < s.vaddr; });
  if (it == segments_.begin()) return nullptr;
  const CoreSegment& segment = *std::prev(it);
  if (address - segment.vaddr >= segment.memsz) return nullptr;
  recent.store(static_cast<size_t>(std::prev(it) - segments_.begin()), std::memory_order_relaxed);
  return &segment;
}

Expected<void> CoreFile::read(uint64_t address, std::span<std::byte> out) const {
  return read_segments_at(address, out, true);
}

Expected<void> CoreFile::read_once(uint64_t address, std::span<std::byte> out) const {
  return read_segments_at(address, out, false);
}

Expected<void> CoreFile::read_segments_at(uint64_t address, std::span<std::byte> out,
                                          bool mapped) const {
  if (mapped && !mapped_.bytes.empty()) {
    // As the loop below answers a read that one segment's saved bytes hold (available_bytes ends
    // within the file), without its layers.
    if (const CoreSegment* segment = segment_containing(address)) {
      const uint64_t offset_in_segment = address - segment->vaddr;
      const uint64_t file_offset = segment->file_offset + offset_in_segment;
      if (offset_in_segment < segment->available_bytes && out.size() <= segment->available_bytes - offset_in_segment &&
          file_offset >= mapped_.first && file_offset <= mapped_.bytes.size() &&
          out.size() <= mapped_.bytes.size() - file_offset) {
        if (!out.empty()) std::memcpy(out.data(), mapped_.bytes.data() + file_offset, out.size());
        return {};
      }
    }
  }
  size_t done = 0;
  while (done < out.size()) {
    const uint64_t current = address + done;
    if (current < address) {
      return make_error(ErrorKind::kUnmapped, "read wraps around the address space", current);
    }
    const CoreSegment* segment = segment_containing(current);
    if (segment == nullptr) {
      return make_error(ErrorKind::kUnmapped, "address is not mapped in the core", current);
    }
    const uint64_t offset_in_segment = current - segment->vaddr;
    if (offset_in_segment >= segment->available_bytes) {
      return make_error(ErrorKind::kNotSaved, "memory was not saved in the core", current);
    }
    const size_t chunk = static_cast<size_t>(
        std::min<uint64_t>(out.size() - done, segment->available_bytes - offset_in_segment));
    const uint64_t file_offset = segment->file_offset + offset_in_segment;
    auto ok = mapped ? pages_.read(file_offset, out.subspan(done, chunk))
                     : elf_->read_file_offset_unmapped(file_offset, out.subspan(done, chunk));
    if (!ok) return make_error(ErrorKind::kNotSaved, ok.error().message, current);
    done += chunk;
  }
  return {};
}

std::optional<std::string> CoreFile::read_string(uint64_t address, size_t max_length) const {
  std::string result;
  std::vector<std::byte> chunk;
  while (result.size() < max_length) {
    // Read up to the next page boundary so that a string ending before a missing page is found.
    const uint64_t current = address + result.size();
    const uint64_t to_page_end = page_size_ - (current % page_size_);
    chunk.resize(static_cast<size_t>(std::min<uint64_t>(to_page_end, max_length - result.size())));
    if (!read(current, chunk)) return std::nullopt;
    const char* chars = reinterpret_cast<const char*>(chunk.data());
    const size_t length = strnlen(chars, chunk.size());
    result.append(chars, length);
    if (length < chunk.size()) return result;
  }
  return std::nullopt;
}

}  // namespace hangpy::targets
