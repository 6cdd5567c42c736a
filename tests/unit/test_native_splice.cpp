// Splicing Python frames into a native stack, and the text of merged stacks. The native frames
// are thread "worker-ab" of a gcore of tests/programs/deadlock.py under Debian's python3.11
// (3.11.2), as libdwfl unwound them; the Python frames are that thread's, as the walker read them
// (is_entry as it marked them).
#include <gtest/gtest.h>

#include "native/splice.h"
#include "report/native_report.h"

using namespace hangpy;
using native::FrameHow;
using native::NativeFrame;

namespace {

NativeFrame frame(uint64_t pc, uint64_t sp, const char* symbol, bool inlined = false) {
  NativeFrame result;
  result.pc = pc;
  result.sp = sp;
  result.how = FrameHow::kCfi;
  result.module = "/usr/bin/python3.11";
  result.symbol = symbol;
  result.inlined = inlined;
  return result;
}

std::vector<NativeFrame> worker_native_frames() {
  std::vector<NativeFrame> frames = {
      frame(0x7fe0b7169f16, 0x7fe0b65158d0, "__futex_abstimed_wait_common64", true),
      frame(0x7fe0b7169f16, 0x7fe0b65158d0, "__futex_abstimed_wait_common"),
      frame(0x7fe0b7174d90, 0x7fe0b6515910, "__new_sem_wait_slow64.constprop.0"),
      frame(0x4ce7c3, 0x7fe0b6515960, "PyThread_acquire_lock_timed"),
      frame(0x5660bf, 0x7fe0b65159b0, "lock_PyThread_acquire_lock.lto_priv.0"),
      frame(0x520622, 0x7fe0b6515a40, "cfunction_call.lto_priv.0"),
      frame(0x4ee333, 0x7fe0b6515a60, "_PyObject_MakeTpCall"),
      frame(0x50bd7a, 0x7fe0b6515ab0, "_PyEval_EvalFrameDefault"),
      frame(0x535c91, 0x7fe0b6515c10, "_PyFunction_Vectorcall"),
      frame(0x506881, 0x7fe0b6515c60, "_PyEval_EvalFrameDefault"),
      frame(0x560934, 0x7fe0b6515dc0, "_PyObject_VectorcallTstate.lto_priv.4.lto_priv.0"),
      frame(0x55f948, 0x7fe0b6515e10, "method_vectorcall.lto_priv.0"),
      frame(0x663c3c, 0x7fe0b6515ea0, "thread_run.lto_priv.0"),
      frame(0x63bb34, 0x7fe0b6515ec0, "pythread_wrapper"),
      frame(0x7fe0b716d1f5, 0x7fe0b6515ee0, "start_thread"),
      frame(0x7fe0b71ed8ec, 0x7fe0b6515f80, "__clone3"),
  };
  frames[0].how = frames[1].how = FrameHow::kInitial;
  return frames;
}

cpython::PythonThread worker_python_thread() {
  cpython::PythonThread thread;
  auto add = [&](const char* file, int line, const char* function, bool is_entry) {
    cpython::PythonFrame python;
    python.file = file;
    python.line = line;
    python.function = python.qualname = function;
    python.is_entry = is_entry;
    thread.frames.push_back(python);
  };
  add("deadlock.py", 18, "take_a_then_b", true);
  add("/usr/lib/python3.11/threading.py", 975, "run", false);
  add("/usr/lib/python3.11/threading.py", 1038, "_bootstrap_inner", false);
  add("/usr/lib/python3.11/threading.py", 995, "_bootstrap", true);
  return thread;
}

// What each merged frame is: its symbol, or "py:" and its function.
std::vector<std::string> names(const std::vector<native::MergedFrame>& merged) {
  std::vector<std::string> result;
  for (const auto& entry : merged)
    result.push_back(entry.python ? "py:" + entry.python->function : entry.native->symbol);
  return result;
}

TEST(Splice, EachEvalLoopCallBecomesItsPythonFrames) {
  const auto merged =
      native::splice(worker_native_frames(), worker_python_thread(), "_PyEval_EvalFrameDefault");
  const std::vector<std::string> expected = {
      "__futex_abstimed_wait_common64", "__futex_abstimed_wait_common",
      "__new_sem_wait_slow64.constprop.0", "PyThread_acquire_lock_timed",
      "lock_PyThread_acquire_lock.lto_priv.0", "cfunction_call.lto_priv.0",
      "_PyObject_MakeTpCall", "py:take_a_then_b", "_PyFunction_Vectorcall", "py:run",
      "py:_bootstrap_inner", "py:_bootstrap",
      "_PyObject_VectorcallTstate.lto_priv.4.lto_priv.0", "method_vectorcall.lto_priv.0",
      "thread_run.lto_priv.0", "pythread_wrapper", "start_thread", "__clone3"};
  EXPECT_EQ(names(merged), expected);
  // Each Python frame keeps the eval-loop frame that runs it.
  EXPECT_EQ(merged[7].native->pc, 0x50bd7aU);
  EXPECT_EQ(merged[11].native->pc, 0x506881U);
}

TEST(Splice, LeftoverPythonFramesGoLastWithoutANativeFrame) {
  auto native_frames = worker_native_frames();
  native_frames.resize(9);  // the walk ended inside the first eval-loop call's caller
  const auto merged =
      native::splice(native_frames, worker_python_thread(), "_PyEval_EvalFrameDefault");
  ASSERT_EQ(merged.size(), 12U);
  EXPECT_EQ(merged[8].native->symbol, "_PyFunction_Vectorcall");
  for (size_t i = 9; i < 12; ++i) {
    ASSERT_TRUE(merged[i].python);
    EXPECT_FALSE(merged[i].native);
  }
  EXPECT_EQ(merged[11].python->function, "_bootstrap");
}

TEST(Splice, AnUnnamedEvalLoopIsFoundByTheEntryFrameOnItsStack) {
  // A stripped 3.14 whose eval loop body is an unnamed clone: its frames have no symbol, but each
  // group's entry frame lives among that call's C locals.
  auto native_frames = worker_native_frames();
  native_frames[7].symbol.clear();
  native_frames[9].symbol.clear();
  auto thread = worker_python_thread();
  thread.frames[0].entry_frame_on_c_stack = native_frames[7].sp + 0x40;   // inside frame 7
  thread.frames[3].entry_frame_on_c_stack = native_frames[9].sp + 0x100;  // inside frame 9
  const auto merged = native::splice(native_frames, thread, "_PyEval_EvalFrameDefault");
  const auto spliced = names(merged);
  EXPECT_EQ(spliced[7], "py:take_a_then_b");
  EXPECT_EQ(spliced[8], "_PyFunction_Vectorcall");
  EXPECT_EQ(spliced[9], "py:run");
  EXPECT_EQ(spliced[11], "py:_bootstrap");
  EXPECT_EQ(merged[7].native->pc, 0x50bd7aU);
  EXPECT_EQ(merged[11].native->pc, 0x506881U);
  // An entry frame outside every native frame's stack matches nothing: the groups go last.
  thread.frames[0].entry_frame_on_c_stack = native_frames[0].sp - 0x10;
  const auto unmatched = names(native::splice(native_frames, thread, "_PyEval_EvalFrameDefault"));
  EXPECT_EQ(unmatched[7], "");
  EXPECT_EQ(unmatched.back(), "py:_bootstrap");
}

TEST(Splice, InlinedCopiesAndOtherNamesAreNotEvalLoopCalls) {
  EXPECT_TRUE(native::is_eval_loop_symbol("_PyEval_EvalFrameDefault", "_PyEval_EvalFrameDefault"));
  EXPECT_TRUE(native::is_eval_loop_symbol("_PyEval_EvalFrameDefault.lto_priv.0",
                                          "_PyEval_EvalFrameDefault"));
  EXPECT_TRUE(native::is_eval_loop_symbol("_PyEval_EvalFrameDefault.cold",
                                          "_PyEval_EvalFrameDefault"));
  EXPECT_FALSE(native::is_eval_loop_symbol("_PyEval_EvalFrameDefaultX", "_PyEval_EvalFrameDefault"));
  EXPECT_FALSE(native::is_eval_loop_symbol("_PyEval_EvalFrame", "_PyEval_EvalFrameDefault"));
  auto native_frames = worker_native_frames();
  native_frames[7].inlined = true;
  const auto merged =
      native::splice(native_frames, worker_python_thread(), "_PyEval_EvalFrameDefault");
  // The inlined copy stays native; the next real call takes the first group.
  EXPECT_EQ(merged[7].native->symbol, "_PyEval_EvalFrameDefault");
  EXPECT_EQ(names(merged)[9], "py:take_a_then_b");
}

TEST(NativeReport, DemanglesAtTheEdgeAndMarksFramePointerFrames) {
  native::MergedStack stack;
  NativeFrame join = frame(0x7f0000001234, 0x7ffd0000, "_ZNSt6thread4joinEv");
  join.module = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
  join.offset = 0x14;
  join.how = FrameHow::kFramePointer;
  stack.frames.push_back({join, std::nullopt});
  stack.end_reason = "stopped after 512 frames";
  const std::string text = report::format_merged_stack(stack, nullptr, report::TextStyle{});
  EXPECT_NE(text.find("0x00007f0000001234 in std::thread::join()+0x14 (libstdc++.so.6) "
                      "[frame pointer]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<native frames end here: stopped after 512 frames>"), std::string::npos);
  const nlohmann::json json = report::merged_stack_json(stack);
  EXPECT_EQ(json["frames"][0]["symbol"], "_ZNSt6thread4joinEv");
  EXPECT_EQ(json["frames"][0]["demangled"], "std::thread::join()");
  EXPECT_EQ(json["frames"][0]["how"], "frame_pointer");
}

}  // namespace
