// What gdb knows about its target that gdb 13's Python API does not hand out: the core file's
// path (`info target`), the files mapped in the process (`info proc mappings`: the core's NT_FILE
// note, or /proc/PID/maps) and each thread's fs_base register. The first two are parsed from
// gdb's text; each parser names the lines it reads. Interrupts (Ctrl-C) throw PythonErrorSet;
// gdb's own errors give empty answers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gdbplugin/python_ref.h"

namespace hangpy::gdbplugin {

// The path of the core file the selected inferior has open; nullopt for a live process.
std::optional<std::string> core_file_path();

struct MappedFile {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string path;
};
// Every file-backed mapping of the selected inferior, in gdb's order.
std::vector<MappedFile> mapped_files();

// fs_base of each of `threads` (gdb.InferiorThread objects) from its registers; 0 where gdb
// cannot read it. gdb reads the registers of its selected thread only, so each thread is
// selected in turn; gdb's selected thread and frame are restored afterwards.
std::vector<uint64_t> fs_base_registers(const std::vector<PyRef>& threads);

}  // namespace hangpy::gdbplugin
