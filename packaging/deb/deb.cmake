# The Debian package (scripts/package: `cpack -G DEB` in the portable build). It carries the same
# coreanalyze and gdb module as the tarball, so it installs on Debian 11 as well as 12 and 13
# (Depends: glibc, libgcc_s and libelf only; see below). With HANGPY_SYSTEM_GDBINIT it also
# installs /etc/gdb/gdbinit.d/hangpy.gdb, which Debian's gdb reads at start-up, so that
# `load hangpy` works in every gdb session with no init line of the user's own.
# The files only the package installs are in deb_files.cmake (packaging/CMakeLists.txt includes
# it, so that they are installed before the man pages and changelogs are compressed there).
if(HANGPY_SYSTEM_GDBINIT AND TARGET hangpy_gdb)
  # CPack does not mark files under /etc as configuration files: a local edit must survive an
  # upgrade, so dpkg is told through the control file `conffiles`.
  file(WRITE ${CMAKE_BINARY_DIR}/deb-control/conffiles "/etc/gdb/gdbinit.d/hangpy.gdb\n")
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/deb-control/conffiles)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hangpy)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # hangpy_VERSION-RELEASE_amd64.deb
set(CPACK_PACKAGE_CONTACT "hangpy developers <hangpy@example.org>")
# Not a native Debian package: the upstream changelog is CHANGELOG.md (changelog.gz) and
# changelog.Debian.gz says how the package was made.
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Python stacks of hung processes and cores, in gdb and on the command line")
# The extended description: CPack puts the summary above it and indents every line by one space.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "coreanalyze prints every thread's Python stack from a core file (gcore,
kernel, systemd-coredump, ABRT, apport, compressed) or a running process,
with native frames, what each thread is blocked on, deadlocks, locals and
asyncio tasks, and merges the stacks of every rank of a job. The gdb module
adds py-bt, py-list, py-locals and friends without Python debug info.
CPython 2.7 and 3.6 to 3.15.

This package makes `load hangpy` available in every gdb session
(/etc/gdb/gdbinit.d/hangpy.gdb); that init takes the command name `load`.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends come from the symbol versions the files ask for, measured when cpack runs
# (cpack_depends.cmake). dpkg-shlibdeps overstates them: it maps pthread_create@GLIBC_2.2.5 to
# libc6 2.34, the release that moved it into libc.so.6, though libpthread.so.0 had it long before.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(HANGPY_DEB_FILES ${CMAKE_BINARY_DIR}/bin/coreanalyze)
if(TARGET hangpy_gdb)
  list(APPEND HANGPY_DEB_FILES ${HANGPY_GDB_MODULE_DIR}/hangpy.abi3.so)
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/cpack_depends.cmake.in
               ${CMAKE_BINARY_DIR}/cpack_depends.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_BINARY_DIR}/cpack_depends.cmake)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS gdb)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libdebuginfod1, zstd")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
# The init file names /usr/...: CPack must install with the real prefix under a staging DESTDIR,
# not with the staging directory as the prefix.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
