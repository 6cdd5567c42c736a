// The engine's Target over gdb's selected inferior (live process or core): memory through
// GdbMemory, symbols through the objfiles gdb has loaded (ELF symbols are enough, no debug info
// needed), threads and files as gdb lists them. A snapshot core (coreanalyze --snapshot) carries
// the addresses of the symbols its analysis used, in a note: gdb has none of its binaries, so
// those addresses answer first, as they do in coreanalyze.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/process_target.h"
#include "cpython/target.h"
#include "gdbplugin/gdb_memory.h"
#include "symbols/snapshot_note.h"

namespace hangpy::gdbplugin {

// Never throws out of the Target interface (the engine does not expect exceptions); a Ctrl-C
// during any call into gdb is recorded in gdb_memory().interrupted().
class GdbTarget final : public analysis::ProcessTarget {
 public:
  // Throws UserError when gdb's selected inferior has no process and no core.
  GdbTarget();

  // The inferior's PID and each thread's system call and its arguments, as gdb reads their
  // registers (each thread selected in turn, gdb's selection restored). Unlike the Target
  // functions it throws PythonErrorSet on Ctrl-C, as the commands that call it expect.
  analysis::TargetFacts facts() const override;
  // gdb's unwinder, asked only for the threads the analysis names (about 1 ms a frame), the
  // innermost frames' names only: the diagnosis reads Python frames from the analysis. Its
  // merged() throws PythonErrorSet on Ctrl-C, as facts() does.
  std::unique_ptr<analysis::NativeUnwinding> native_unwinding(bool inlined_frames) const override;

  const cpython::AddressSpace& memory() const override { return memory_; }
  const GdbMemory& gdb_memory() const { return memory_; }
  std::optional<uint64_t> find_symbol(std::string_view name) const override;
  std::vector<cpython::NativeThread> threads() const override;
  std::vector<cpython::MappedModule> modules() const override;

  // The snapshot core whose symbol note answers find_symbol(); nullopt for other targets.
  const std::optional<std::string>& snapshot_path() const { return snapshot_path_; }
  // Problems met while opening the target that still let the analysis go on (one line each).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void read_snapshot_note();
  // These throw; the Target functions above catch.
  std::vector<cpython::NativeThread> list_threads() const;
  std::vector<cpython::MappedModule> list_modules() const;

  PyRef inferior_;
  GdbMemory memory_;
  mutable std::map<std::string, std::optional<uint64_t>, std::less<>> symbols_;
  std::optional<std::string> snapshot_path_;
  symbols::SnapshotSymbols recorded_symbols_;
  std::vector<std::string> warnings_;
};

}  // namespace hangpy::gdbplugin
