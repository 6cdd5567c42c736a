// A thread blocked in an import: importlib's lock of the module (a _ModuleLock) is held by
// another thread, which is importing it. The wait is named by the module and the holder read off
// the lock (its `owner` ident); a holder that is no thread of this process held it when the
// process forked, and nothing here will release it. Pure: reads the lock through the engine.
#pragma once

#include <cstddef>

#include "diagnosis/context.h"
#include "diagnosis/diagnosis.h"

namespace hangpy::diagnosis::detail {

// Rewrites the thread's wait when it is blocked in a _ModuleLock's acquire.
void name_import_wait(const Context& context, size_t index, ThreadDiagnosis& thread);

}  // namespace hangpy::diagnosis::detail
