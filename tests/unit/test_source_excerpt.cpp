// The caret line and --context text of report/source_excerpt.h, on source lines given here: the
// columns are what location tables hold (UTF-8 byte offsets), the carets count characters.
#include <gtest/gtest.h>


#include "report/source_excerpt.h"

namespace {

using hangpy::cpython::PythonFrame;

class LinesReader : public hangpy::report::SourceReader {
 public:
  explicit LinesReader(std::vector<std::string> lines) : lines_(std::move(lines)) {}
  std::optional<std::string> raw_line(const std::string&, int number) override {
    if (number < 1 || static_cast<size_t>(number) > lines_.size()) return std::nullopt;
    return lines_[static_cast<size_t>(number) - 1];
  }
  std::optional<std::string> line(const std::string& file, int number) override {
    return raw_line(file, number);
  }

 private:
  std::vector<std::string> lines_;
};

PythonFrame frame_at(int line, int end_line, int column, int end_column) {
  PythonFrame frame;
  frame.file = "/src/job.py";
  frame.line = line;
  frame.end_line = end_line;
  frame.column = column;
  frame.end_column = end_column;
  return frame;
}

TEST(CaretMarks, CountCharactersNotBytes) {
  // "é" is two bytes: the call starts at byte 12, character 11.
  const std::string raw = "    café = lock.acquire()";
  auto marks = hangpy::report::caret_marks(frame_at(1, 1, 12, 26), raw);
  ASSERT_TRUE(marks);
  EXPECT_EQ(*marks, std::string(11, ' ') + std::string(14, '^'));
}

TEST(CaretMarks, NoneForTheWholeLineOrNoColumns) {
  const std::string raw = "    lock.acquire()";
  EXPECT_FALSE(hangpy::report::caret_marks(frame_at(1, 1, 4, 18), raw));
  PythonFrame no_columns = frame_at(1, 1, 0, 0);
  no_columns.column.reset();
  EXPECT_FALSE(hangpy::report::caret_marks(no_columns, raw));
  EXPECT_FALSE(hangpy::report::caret_marks(frame_at(1, 1, 40, 50), raw));  // beyond the line
}

TEST(CaretMarks, ASpanningExpressionRunsToTheLineEnd) {
  const std::string raw = "    total = max(a,";
  auto marks = hangpy::report::caret_marks(frame_at(1, 3, 12, 9), raw);
  ASSERT_TRUE(marks);
  EXPECT_EQ(*marks, std::string(12, ' ') + std::string(6, '^'));
}

TEST(FrameSource, TrimmedLineWithCarets) {
  LinesReader reader({"def f(lock):", "    x = lock.acquire()", "    return x"});
  EXPECT_EQ(hangpy::report::format_frame_source(frame_at(2, 2, 8, 22), &reader, 0),
            "    x = lock.acquire()\n"
            "        ^^^^^^^^^^^^^^\n");
}

TEST(FrameSource, ContextMarksTheCurrentLineAndStopsAtTheFileEnd) {
  LinesReader reader({"def f(lock):", "    x = lock.acquire()", "    return x"});
  EXPECT_EQ(hangpy::report::format_frame_source(frame_at(2, 2, 8, 22), &reader, 5),
            "      1  def f(lock):\n"
            "    > 2      x = lock.acquire()\n"
            "                 ^^^^^^^^^^^^^^\n"
            "      3      return x\n");
  auto context = hangpy::report::context_json(frame_at(3, 3, 4, 12), reader, 1);
  ASSERT_EQ(context.size(), 2u);
  EXPECT_EQ(context[0]["line"], 2);
  EXPECT_EQ(context[1]["current"], true);
  EXPECT_EQ(context[1]["text"], "    return x");
}

TEST(FrameSource, UnreadableSourceGivesNothing) {
  LinesReader reader({});
  EXPECT_EQ(hangpy::report::format_frame_source(frame_at(2, 2, 8, 22), &reader, 0), "");
  EXPECT_TRUE(hangpy::report::context_json(frame_at(2, 2, 8, 22), reader, 3).is_null());
}

}  // namespace
