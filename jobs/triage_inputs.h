// coreanalyze triage's inputs: what each path or PID on the command line is, and a directory of
// gathered results expanded into its files.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"

namespace hangpy::jobs {

struct TriageInput {
  enum class Kind { kJson, kCore, kPid };
  Kind kind = Kind::kCore;
  std::string path;  // kJson, kCore
  int pid = 0;       // kPid
  std::string name;  // as the user would name it: the path, or "--pid 4242"
};

// Paths become inputs by content: a JSON document (first character '{' or '['), a core in any
// form coreanalyze reads (an ABRT problem directory included), or a directory of such files,
// searched recursively in name order (files that are neither are skipped there, with a note).
// PIDs come last, in the order given. Errors: a path that cannot be read (kIo), no input at all.
Expected<std::vector<TriageInput>> gather_triage_inputs(const std::vector<std::string>& paths,
                                                        const std::vector<int>& pids,
                                                        std::vector<std::string>& notes);

}  // namespace hangpy::jobs
