// How much of a document's strings the triage keeps.
#pragma once

#include <cstddef>

namespace hangpy::triage {

// The longest string a triage keeps of a document: a name, a file, a description. A longer one (a
// 100 MB thread name from a hostile core) is cut, with "..." after it.
inline constexpr size_t kMaxTriageString = 4096;

}  // namespace hangpy::triage
