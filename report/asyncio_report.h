// Text and JSON of asyncio's tasks and their waits (diagnosis/task_waits.h): a table like `python -m asyncio ps`,
// the awaited-by forest like `python -m asyncio pstree` with each task's coroutine stack, and one
// "deadlock:" line per await cycle. Shared by coreanalyze and gdb's py-tasks.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cpython/stacks.h"
#include "diagnosis/task_waits.h"

namespace hangpy::report {

// Past this many tasks the text folds tasks with the same coroutine chain into one line each.
inline constexpr size_t kMaxTasksListed = 200;

// Empty when the process never imported asyncio.
std::string format_asyncio_tasks(const diagnosis::TaskForest& tasks,
                                 const cpython::ProcessStacks& stacks);

// The JSON lists this many tasks in full; "chains" counts every task read.
inline constexpr size_t kMaxTasksInJson = 10000;

// The "asyncio" object of docs/json-schema.md, added to a process_document() when asyncio was
// imported.
void add_asyncio_tasks(nlohmann::json& document, const diagnosis::TaskForest& tasks);

}  // namespace hangpy::report
