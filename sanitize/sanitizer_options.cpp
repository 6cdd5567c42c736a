// The sanitizer runtimes' default options for the programs of a HANGPY_SANITIZE build (coreanalyze,
// the unit tests): the runtimes call these hooks at start-up, before main, and an ASAN_OPTIONS or
// UBSAN_OPTIONS in the environment still overrides them. The values come from the top-level
// CMakeLists.txt.

extern "C" {

// Called by the runtimes though nothing here calls them: declared for -Wmissing-declarations.
const char* __asan_default_options();
const char* __ubsan_default_options();

const char* __asan_default_options() { return HANGPY_ASAN_OPTIONS; }
const char* __ubsan_default_options() { return HANGPY_UBSAN_OPTIONS; }

}  // extern "C"
