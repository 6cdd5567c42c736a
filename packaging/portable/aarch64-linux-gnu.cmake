# The arm64 (aarch64) release files, cross-built on Debian 12 amd64 by
# `scripts/package --arch arm64` (build-package-arm64/, with HANGPY_PORTABLE: portable.cmake).
# Debian's cross toolchain (crossbuild-essential-arm64) compiles; the arm64 libraries are Debian
# 12's own -dev packages, installed beside the amd64 ones (multiarch: /usr/lib/aarch64-linux-gnu,
# headers shared in /usr/include), and linked against Debian 11's arm64 glibc
# (scripts/make-glibc-sysroot --arch arm64), the same floor as amd64's. What cannot be installed
# beside the amd64 packages is unpacked under /var/tmp: `scripts/install-deps --arm64` does all of
# it. A native arm64 build needs none of this file.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# CMake finds CMAKE_LIBRARY_ARCHITECTURE (aarch64-linux-gnu) in the compiler's own directories, so
# find_library and find_package look in /usr/lib/aarch64-linux-gnu (and its cmake/: Boost, fmt),
# never in the amd64 /usr/lib/x86_64-linux-gnu; portable.cmake names the sysroot's with it too.
# pkg-config must read the arm64 .pc files alone, never the amd64 ones (their libdir is
# /usr/lib/x86_64-linux-gnu): told here, no aarch64-linux-gnu-pkg-config (pkgconf:arm64) is needed.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

set(HANGPY_GLIBC_SYSROOT /var/tmp/hangpy-glibc-sysroot-arm64 CACHE PATH
    "Debian 11's arm64 libc6, libc6-dev and libgcc-s1 unpacked (scripts/make-glibc-sysroot --arch arm64)")
# What runs an arm64 program here (try_run, add_test): qemu, on the old glibc of that sysroot, so
# that a symbol the floor lacks fails at once. Not -L /usr/aarch64-linux-gnu: its ld.so
# (libc6-arm64-cross 2.36-8cross1) then loads the libc.so.6 of libc6:arm64 (2.36-9+deb12u*, which
# the -dev packages bring into /lib/aarch64-linux-gnu, looked up first), and a program that starts
# a thread spins for ever on the mismatch. The build's own runs of coreanalyze (help2man) go
# through qemu-user-static's binfmt entry, on libc6:arm64's own ld.so and libc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L ${HANGPY_GLIBC_SYSROOT})
# LLVM's demangler: llvm-14-dev:arm64 cannot be installed beside the amd64 llvm-14-dev (apt would
# remove 44 amd64 packages), so its libLLVMDemangle.a alone is unpacked; the headers are this
# machine's (the same LLVM 14). The top CMakeLists.txt looks in /usr/lib/llvm-14 only when this is
# not set.
set(HANGPY_ARM64_LLVM /var/tmp/hangpy-arm64-llvm CACHE PATH
    "libLLVMDemangle.a of llvm-14-dev:arm64 unpacked (scripts/install-deps --arm64)")
set(LLVM_DEMANGLE_LIB ${HANGPY_ARM64_LLVM}/usr/lib/llvm-14/lib/libLLVMDemangle.a CACHE FILEPATH
    "LLVM's demangler, arm64")
# The gdb the module is for is an arm64 one: Debian 12's gdb:arm64 through qemu (arm64-gdb says
# why and how). gdbplugin/ asks it for its Python's headers, the build runs it with the module to
# write hangpy-gdb.1.
set(HANGPY_GDB ${CMAKE_CURRENT_LIST_DIR}/arm64-gdb CACHE FILEPATH "Debian 12's gdb:arm64 under qemu")
# CPack asks dpkg for the architecture of the machine that builds.
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
