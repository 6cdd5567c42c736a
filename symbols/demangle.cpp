#include "symbols/demangle.h"

#include <llvm/Demangle/Demangle.h>

namespace hangpy::symbols {

std::string demangle(std::string_view name) {
  // LLVM 14's llvm::demangle returns its input unchanged when it cannot demangle it.
  return llvm::demangle(std::string(name));
}

}  // namespace hangpy::symbols
