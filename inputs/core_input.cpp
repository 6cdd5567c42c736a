#include "inputs/core_input.h"

#include <filesystem>

#include "inputs/abrt_directory.h"
#include "inputs/apport_core.h"
#include "inputs/decompress_core.h"
#include "inputs/input_format.h"

namespace hangpy::inputs {
namespace {

std::string megabytes(uint64_t bytes) { return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6); }

// A file inside a wrapper: a plain core, or a compressed one (ABRT may keep coredump compressed).
Expected<CoreInput> unwrap_file(const std::string& path, const std::string& name, InputFormat format) {
  CoreInput input;
  input.core_name = name;
  switch (format) {
    case InputFormat::kZstd:
    case InputFormat::kLz4:
    case InputFormat::kXz:
    case InputFormat::kGzip: {
      auto core = decompress_core(path, name, format);
      if (!core) return std::unexpected(core.error());
      input.core_path = core->path;
      input.notes.push_back(fmt::format("{}: {} data, {} decompressed to a {} core", name,
                                        format_name(format), megabytes(core->compressed_bytes),
                                        megabytes(core->core_bytes)));
      if (core->truncation) input.warnings.push_back(*core->truncation);
      return input;
    }
    default:
      // An ELF file, or something the core reader will reject with its own message.
      input.core_path = path;
      return input;
  }
}

}  // namespace

Expected<CoreInput> unwrap_core_input(const std::string& path, const std::string& name) {
  auto format = format_of_path(path);
  if (!format) {
    Error error = format.error();
    if (name != path) error.message = fmt::format("cannot open {}", name);
    return std::unexpected(error);
  }
  switch (*format) {
    case InputFormat::kAbrtDirectory: {
      auto problem = read_abrt_directory(path);
      if (!problem) return std::unexpected(problem.error());
      const std::string coredump_name = name + "/coredump";
      auto coredump_format = format_of_path(problem->coredump_path);
      if (!coredump_format) return std::unexpected(coredump_format.error());
      if (*coredump_format == InputFormat::kAbrtDirectory || *coredump_format == InputFormat::kApportReport) {
        return make_error(ErrorKind::kInvalidInput, fmt::format("{} is not a core", coredump_name));
      }
      auto input = unwrap_file(problem->coredump_path, coredump_name, *coredump_format);
      if (!input) return input;
      input->executable_hint = problem->executable;
      input->maps_hint = problem->maps;
      input->saved_environment = problem->environment;
      input->saved_environment_source = "ABRT environ";
      input->saved_host = problem->hostname;
      if (problem->open_fds) input->saved_open_files = parse_abrt_open_fds(*problem->open_fds);
      input->notes.push_back(fmt::format("{}: ABRT problem directory{}{}", name,
                                         problem->pid ? ", pid " + *problem->pid : "",
                                         problem->cmdline ? ", command line: " + *problem->cmdline : ""));
      return input;
    }
    case InputFormat::kApportReport: {
      auto core = read_apport_core(path, name);
      if (!core) return std::unexpected(core.error());
      CoreInput input;
      input.core_path = core->path;
      input.core_name = name;
      input.executable_hint = core->executable;
      input.maps_hint = core->proc_maps;
      input.saved_environment = core->environment;
      input.saved_environment_source = "apport ProcEnviron";
      input.notes.push_back(fmt::format("{}: apport report, CoreDump decoded to a {} core", name,
                                        megabytes(core->core_bytes)));
      if (core->truncation) input.warnings.push_back(*core->truncation);
      return input;
    }
    case InputFormat::kUnknown:
      // A directory that is no ABRT problem directory; files go to the core reader, which says
      // what they are not.
      if (std::error_code error; std::filesystem::is_directory(path, error)) {
        return make_error(ErrorKind::kInvalidInput,
                          fmt::format("{} is a directory, and not an ABRT problem directory (no "
                                      "executable or cmdline file beside time or pid)",
                                      name));
      }
      return unwrap_file(path, name, *format);
    default:
      return unwrap_file(path, name, *format);
  }
}

}  // namespace hangpy::inputs
