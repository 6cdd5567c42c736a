// What the commands do with their argument: gdb hands it over as typed, blanks included.
#pragma once

#include <string_view>

namespace hangpy::gdbplugin {

// `text` without leading and trailing blanks (spaces, tabs).
std::string_view trim(std::string_view text);

// Throws UserError "COMMAND takes no arguments" when `argument` holds anything but blanks.
void refuse_arguments(std::string_view command, std::string_view argument);

}  // namespace hangpy::gdbplugin
