// The sanitizer runtimes' default options for the programs of a HANGPY_SANITIZE build (coreanalyze,
// the unit tests): the runtimes call these hooks at start-up, before main, and an ASAN_OPTIONS,
// UBSAN_OPTIONS or LSAN_OPTIONS in the environment still overrides them. The option values come
// from the top-level CMakeLists.txt.

extern "C" {

// Called by the runtimes though nothing here calls them: declared for -Wmissing-declarations.
const char* __asan_default_options();
const char* __ubsan_default_options();
const char* __lsan_default_suppressions();

const char* __asan_default_options() { return HANGPY_ASAN_OPTIONS; }
const char* __ubsan_default_options() { return HANGPY_UBSAN_OPTIONS; }

// Leaks that are not ours. elfutils 0.188's dwarf_getscopes() (native/dwfl_symbolizer.cpp, for
// --inlined) leaks the array it built whenever it returns 0, which it does on Debian's python3.11
// (LTO and dwz: it does not find an inlined call's abstract origin), and the caller never sees the
// pointer. libdw is built without frame pointers, so the report's stack ends at libdw's malloc and
// only the module can name it: this also hides any other leak made inside libdw.
const char* __lsan_default_suppressions() { return "leak:libdw.so.1\n"; }

}  // extern "C"
