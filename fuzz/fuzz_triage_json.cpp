// libFuzzer target: coreanalyze triage's reading of --json documents from other machines
// (triage/process_record.h) and everything it makes of them: the merge, the verdict, the text,
// the HTML page and the triage's own JSON. The document is parsed in place as triage parses it
// (RapidJSON, after a depth check: no hostile nesting reaches the stack); no string the triage keeps is
// longer than kMaxTriageString and its "...".
#include <cstddef>
#include <cstdint>
#include <string>

#include "report/triage_html.h"
#include "report/triage_json.h"
#include "report/triage_text.h"
#include "triage/merge.h"
#include "triage/process_record.h"

using namespace hangpy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t cut = 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  auto records = triage::records_from_text(text, "fuzz.json", cut);
  if (!records) return 0;
  for (const triage::ProcessRecord& record : *records)
    for (const triage::ThreadRecord& thread : record.threads)
      for (const triage::Frame& frame : thread.python_frames)
        if (frame.function.size() > triage::kMaxTriageString + 3 || frame.file.size() > triage::kMaxTriageString + 3)
          __builtin_trap();
  // Twice the same documents: the same process given twice counts once.
  std::vector<triage::ProcessRecord> processes = *records;
  processes.insert(processes.end(), records->begin(), records->end());
  triage::Triage triage = triage::merge(std::move(processes));
  (void)report::format_triage(triage);
  (void)report::triage_html(triage);
  (void)report::triage_document(triage).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
