// We write the ELF by hand: libelf writes data through sections, and a core has only segments
// (program headers) and notes; the format is a fixed header, a header table and raw bytes.
#include "targets/snapshot_writer.h"

#include <elf.h>
#include <signal.h>
#include <sys/procfs.h>

#include <algorithm>
#include <cstring>

#include "targets/initial_environment.h"
#include "base/output_file.h"
#include "symbols/snapshot_note.h"
#include "targets/namespace_pids.h"
#include "targets/pipe_ends.h"
#include "targets/socket_ends.h"

namespace hangpy::targets {
namespace {

void append_note(std::vector<std::byte>& out, const char* name, uint32_t type,
                 std::span<const std::byte> desc) {
  auto pad4 = [&out] { out.resize((out.size() + 3) & ~size_t{3}); };
  Elf64_Nhdr header{static_cast<Elf64_Word>(std::strlen(name) + 1),
                    static_cast<Elf64_Word>(desc.size()), type};
  auto bytes = std::as_bytes(std::span(&header, 1));
  out.insert(out.end(), bytes.begin(), bytes.end());
  auto name_bytes = std::as_bytes(std::span(name, header.n_namesz));
  out.insert(out.end(), name_bytes.begin(), name_bytes.end());
  pad4();
  out.insert(out.end(), desc.begin(), desc.end());
  pad4();
}

template <typename T>
void append_struct_note(std::vector<std::byte>& out, uint32_t type, const T& value) {
  append_note(out, "CORE", type, std::as_bytes(std::span(&value, 1)));
}

void append_u64(std::vector<std::byte>& out, uint64_t value) {
  auto bytes = std::as_bytes(std::span(&value, 1));
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// The process notes, rebuilt from what the core reader parsed or what /proc told.
std::vector<std::byte> build_notes(const SnapshotProcess& process, const cpython::RecordingTarget& recorded) {
  std::vector<std::byte> notes;
  const cpython::ProcessInfo& facts = process.facts;
  for (const CoreThread& thread : process.threads) {
    // The header, the machine's pr_reg, then pr_fpvalid and padding (machine_registers.h).
    PrstatusHeader header{};
    header.pid = static_cast<int32_t>(thread.lwp);
    header.current_signal = static_cast<int16_t>(thread.current_signal);
    header.signal_number = thread.current_signal;
    std::vector<std::byte> status(MachineRegisters::prstatus_size(process.machine));
    std::memcpy(status.data(), &header, sizeof header);
    std::memcpy(status.data() + sizeof header, thread.registers.words.data(),
                MachineRegisters::word_count(process.machine) * 8);
    append_note(notes, "CORE", NT_PRSTATUS, status);
    if (process.machine == cpython::Machine::kAarch64 && thread.registers.arm_tls != 0) {
      std::vector<std::byte> tls;
      append_u64(tls, thread.registers.arm_tls);
      append_note(notes, "LINUX", kNoteArmTls, tls);
    }
  }
  elf_prpsinfo info{};
  info.pr_pid = static_cast<pid_t>(facts.pid);
  info.pr_ppid = static_cast<pid_t>(facts.parent_pid.value_or(0));
  info.pr_uid = facts.uid.value_or(0);
  info.pr_gid = facts.gid.value_or(0);
  info.pr_sname = facts.state.value_or(0);
  std::strncpy(info.pr_fname, facts.command.c_str(), sizeof(info.pr_fname) - 1);
  // Cut as the note holds it, without the spaces the reader trims (gcore pads the field), so
  // that a snapshot written from this one holds the same bytes.
  std::string arguments = facts.arguments.substr(0, sizeof(info.pr_psargs) - 1);
  while (!arguments.empty() && arguments.back() == ' ') arguments.pop_back();
  std::strncpy(info.pr_psargs, arguments.c_str(), sizeof(info.pr_psargs) - 1);
  append_struct_note(notes, NT_PRPSINFO, info);
  if (facts.signal) {
    siginfo_t signal_info{};
    signal_info.si_signo = *facts.signal;
    if (const auto& original = facts.signal_info) {  // the sender or fault, as the core had it
      signal_info.si_code = original->code;
      if (original->sender_pid) signal_info.si_pid = static_cast<pid_t>(*original->sender_pid);
      if (original->sender_uid) signal_info.si_uid = *original->sender_uid;
      if (original->fault_address)
        signal_info.si_addr = reinterpret_cast<void*>(*original->fault_address);
    }
    append_struct_note(notes, NT_SIGINFO, signal_info);
  }
  std::vector<std::byte> auxv;
  for (const auto& [key, value] : process.auxv) {
    append_u64(auxv, key);
    append_u64(auxv, value);
  }
  append_u64(auxv, AT_NULL);
  append_u64(auxv, 0);
  append_note(notes, "CORE", NT_AUXV, auxv);

  std::vector<std::byte> files;
  append_u64(files, process.file_mappings.size());
  append_u64(files, 1);  // offsets in bytes, as gdb's gcore writes them: exact whatever the source
  for (const FileMapping& mapping : process.file_mappings) {
    append_u64(files, mapping.start);
    append_u64(files, mapping.end);
    append_u64(files, mapping.file_offset);
  }
  for (const FileMapping& mapping : process.file_mappings) {
    auto name = std::as_bytes(std::span(mapping.path.c_str(), mapping.path.size() + 1));
    files.insert(files.end(), name.begin(), name.end());
  }
  append_note(notes, "CORE", NT_FILE, files);
  append_note(notes, symbols::kSnapshotNoteName, symbols::kSnapshotSymbolsNoteType,
              symbols::encode_snapshot_symbols(recorded.symbols()));
  if (facts.taken_at) {
    // The CPU times go here, not in NT_PRSTATUS: there 0 means "not recorded" (gcore's), while a
    // thread that slept since it started has used 0 s.
    std::vector<std::byte> look;
    append_u64(look, static_cast<uint64_t>(*facts.taken_at * 1e9));
    for (const CoreThread& thread : process.threads) {
      if (!thread.cpu_seconds) continue;
      append_u64(look, static_cast<uint64_t>(thread.lwp));
      append_u64(look, static_cast<uint64_t>(*thread.cpu_seconds * 1e9));
    }
    append_note(notes, symbols::kSnapshotNoteName, symbols::kSnapshotLookNoteType, look);
  }
  if (!process.native_stacks.empty())
    append_note(notes, symbols::kSnapshotNoteName, symbols::kSnapshotNativeNoteType, process.native_stacks);
  if (!facts.pipe_ends.empty())
    append_note(notes, symbols::kSnapshotNoteName, symbols::kSnapshotPipesNoteType, encode_pipe_ends(facts.pipe_ends));
  if (!facts.socket_ends.empty())
    append_note(notes, symbols::kSnapshotNoteName, symbols::kSnapshotSocketsNoteType, encode_socket_ends(facts.socket_ends));
  if (!facts.namespace_pids.empty())
    append_note(notes, symbols::kSnapshotNoteName, symbols::kSnapshotNamespacePidsNoteType,
                encode_namespace_pids(facts.namespace_pids));
  if (!process.label_variables.empty()) {
    std::vector<std::byte> labels;
    for (const auto& [name, value] : process.label_variables) {
      const std::string entry = name + "=" + value;
      auto bytes = std::as_bytes(std::span(entry.c_str(), entry.size() + 1));
      labels.insert(labels.end(), bytes.begin(), bytes.end());
    }
    append_note(notes, symbols::kSnapshotNoteName, symbols::kSnapshotLabelsNoteType, labels);
  }
  return notes;
}

struct Run {
  uint64_t start = 0;
  std::vector<std::byte> bytes;
  uint32_t flags = PF_R;
};

// Consecutive recorded pages become one segment; each page is read again through the full
// memory view (core, then mapped files), so file-backed pages are saved too, and every byte of it
// the analysis did not read is written as zero (read_ranges.h): a heap neighbour of an object it
// read, os.environ's copies of the environment, a local nobody asked for stay behind.
// The environment strings of the initial stack are zeroed even where something read them (see
// initial_environment_strings): only the label variables leave the machine, in their note.
std::vector<Run> collect_runs(const SnapshotProcess& process, const cpython::RecordingTarget& recorded) {
  constexpr uint64_t kPage = cpython::RecordingTarget::kPageSize;
  const auto withheld = initial_environment_strings(recorded.inner_memory(), process.auxv);
  std::vector<Run> runs;
  std::vector<std::byte> page(kPage);
  for (uint64_t address : recorded.pages()) {
    if (!recorded.inner_memory().read(address, page)) continue;
    recorded.read_bytes().clear_unread(address, page);
    if (withheld && withheld->first < address + kPage && address < withheld->second) {
      const uint64_t from = std::max(withheld->first, address) - address;
      const uint64_t to = std::min(withheld->second, address + kPage) - address;
      std::fill(page.begin() + static_cast<ptrdiff_t>(from), page.begin() + static_cast<ptrdiff_t>(to),
                std::byte{0});
    }
    const uint32_t flags = process.protection_at ? process.protection_at(address) : PF_R;
    if (runs.empty() || runs.back().start + runs.back().bytes.size() != address ||
        runs.back().flags != flags) {
      runs.push_back(Run{address, {}, flags});
    }
    runs.back().bytes.insert(runs.back().bytes.end(), page.begin(), page.end());
  }
  return runs;
}

}  // namespace

Expected<void> write_snapshot(const std::string& path, const SnapshotProcess& process,
                              const cpython::RecordingTarget& recorded) {
  std::vector<std::byte> notes = build_notes(process, recorded);
  std::vector<Run> runs = collect_runs(process, recorded);

  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_CORE;
  header.e_machine = elf_machine(process.machine);
  header.e_version = EV_CURRENT;
  header.e_phoff = sizeof(Elf64_Ehdr);
  header.e_ehsize = sizeof(Elf64_Ehdr);
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = static_cast<Elf64_Half>(1 + runs.size());

  std::vector<Elf64_Phdr> program_headers;
  uint64_t offset = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) * header.e_phnum;
  program_headers.push_back(Elf64_Phdr{PT_NOTE, 0, offset, 0, 0, notes.size(), 0, 4});
  offset += notes.size();
  for (const Run& run : runs) {
    offset = (offset + 4095) & ~uint64_t{4095};
    program_headers.push_back(Elf64_Phdr{PT_LOAD, run.flags, offset, run.start, 0,
                                         run.bytes.size(), run.bytes.size(), 4096});
    offset += run.bytes.size();
  }

  return write_file_atomically(path, [&](std::ostream& out) {
    uint64_t position = 0;
    auto write = [&out, &position](const void* data, size_t size) {
      out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
      position += size;
    };
    write(&header, sizeof(header));
    write(program_headers.data(), program_headers.size() * sizeof(Elf64_Phdr));
    write(notes.data(), notes.size());
    for (size_t i = 0; i < runs.size(); ++i) {
      const std::vector<char> padding(program_headers[i + 1].p_offset - position, 0);
      write(padding.data(), padding.size());
      write(runs[i].bytes.data(), runs[i].bytes.size());
    }
  });
}

}  // namespace hangpy::targets
