#include "gdbplugin/command_arguments.h"

#include <fmt/format.h>

#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

constexpr std::string_view kBlanks = " \t";

}  // namespace

std::string_view trim(std::string_view text) {
  size_t first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  size_t last = text.find_last_not_of(kBlanks);
  return text.substr(first, last - first + 1);
}

void refuse_arguments(std::string_view command, std::string_view argument) {
  if (!trim(argument).empty()) throw UserError(fmt::format("{} takes no arguments", command));
}

}  // namespace hangpy::gdbplugin
