# HANGPY_PORTABLE: coreanalyze and the gdb module for any x86-64 (or, cross-built with
# aarch64-linux-gnu.cmake, arm64) Linux with an old glibc (the floor measured by scripts/package,
# from `objdump -T`), built on Debian 12 by scripts/package. Every library but glibc and libgcc_s
# is linked statically from Debian's own .a files (elfutils, zstd, lz4, xz, zlib, bzip2,
# Boost.ProgramOptions, LLVM's demangler, libstdc++; fmt header-only, as Debian ships no
# libfmt.a). glibc's symbol versions are kept low by linking against Debian 11's glibc
# (HANGPY_GLIBC_SYSROOT, made by scripts/make-glibc-sysroot, for arm64 with --arch arm64): the
# compiler and its headers stay Debian 12's, only the link sees the old libc, its start files and
# its libgcc_s. A symbol the old glibc lacks is then a link error, never a failure on a user's
# machine. packaging/portable/glibc_floor.cpp supplies those that libstdc++ 12 needs.
set(HANGPY_GLIBC_SYSROOT "/var/tmp/hangpy-glibc-sysroot" CACHE PATH
    "Debian 11's libc6, libc6-dev and libgcc-s1 unpacked (scripts/make-glibc-sysroot)")
# The target's multiarch directory: x86_64-linux-gnu, or aarch64-linux-gnu when cross-built.
set(_sysroot_lib ${HANGPY_GLIBC_SYSROOT}/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})
if(NOT EXISTS ${_sysroot_lib}/libc_nonshared.a OR NOT EXISTS ${HANGPY_GLIBC_SYSROOT}/lib/${CMAKE_LIBRARY_ARCHITECTURE}/libgcc_s.so)
  message(FATAL_ERROR "HANGPY_PORTABLE: no glibc sysroot at ${HANGPY_GLIBC_SYSROOT} "
                      "(scripts/make-glibc-sysroot makes it)")
endif()

# Static archives wherever a library is looked up (pkg-config's targets and Boost's included).
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(Boost_USE_STATIC_LIBS ON)

# -B: the old glibc's crt1.o, crti.o and crtn.o, whose start-up runs the program's constructors
# itself (glibc 2.34's start files leave that to a libc that old systems do not have). -L first:
# its libc.so, libpthread.so, libdl.so, libm.so and libgcc_s.so (Debian 12's libgcc_s wants
# glibc 2.35's _dl_find_object; the static libgcc_eh too, hence no -static-libgcc). --sysroot
# makes the paths inside the old libc.so linker scripts resolve in the sysroot.
add_link_options(
  -B${_sysroot_lib}/
  -L${HANGPY_GLIBC_SYSROOT}/lib/${CMAKE_LIBRARY_ARCHITECTURE}
  -L${_sysroot_lib}
  -Wl,--sysroot=${HANGPY_GLIBC_SYSROOT}
  -Wl,-rpath-link,${HANGPY_GLIBC_SYSROOT}/lib/${CMAKE_LIBRARY_ARCHITECTURE}
  -static-libstdc++
  # Debian 11 keeps the pthread calls (libdw's rwlocks) in libpthread.so; Debian 12's FindThreads
  # finds them in libc and asks for nothing.
  -pthread
  # The static libraries' symbols stay inside the binary and the module: a gdb that has loaded
  # its own libelf or libstdc++ never sees ours.
  -Wl,--exclude-libs,ALL)

add_library(hangpy_glibc_floor OBJECT ${CMAKE_CURRENT_LIST_DIR}/glibc_floor.cpp)
