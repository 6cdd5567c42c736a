// A file with no name, for a child process's input or errors: written and read through its
// descriptor only, so that no pipe can fill while the child waits and nothing is left behind.
#pragma once

namespace hangpy {

// A descriptor (close-on-exec) of an empty anonymous file, or -1 with errno set. memfd_create
// when the kernel has it (Linux 3.17 on; called through syscall(2), because glibc's wrapper is
// 2.27's and the portable coreanalyze runs on older glibcs), else a temporary file in TMPDIR (or
// /tmp) unlinked at once: kernels before 3.17 and sandboxes that forbid memfd_create.
int anonymous_file(const char* name);

// The fallback alone: a temporary file in TMPDIR (or /tmp), unlinked at once; -1 with errno.
int unlinked_temporary_file(const char* name);

}  // namespace hangpy
