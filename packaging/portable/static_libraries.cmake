# HANGPY_PORTABLE, after the pkg-config targets exist (the top CMakeLists.txt): what linking their
# static archives needs besides. pkg-config's targets leave out Libs.private
# (`pkg-config --static --libs libdw libelf`: bzip2, xz, zlib, dlopen; the pthread calls come with
# portable.cmake's -pthread).
find_library(HANGPY_BZ2_STATIC bz2 REQUIRED)
find_library(HANGPY_LZMA_STATIC lzma REQUIRED)
find_library(HANGPY_Z_STATIC z REQUIRED)
set_property(TARGET PkgConfig::LIBDW APPEND PROPERTY INTERFACE_LINK_LIBRARIES
  ${HANGPY_BZ2_STATIC} ${HANGPY_LZMA_STATIC} ${HANGPY_Z_STATIC} ${CMAKE_DL_LIBS})
# libelf.a is built for executables only (initial-exec TLS: no shared object may contain it), so
# the gdb module links the system's libelf.so.1, which every gdb with debuginfod brings along (and
# rpm-based systems have anyway); coreanalyze links the archive.
set(CMAKE_FIND_LIBRARY_SUFFIXES .so)
find_library(HANGPY_LIBELF_SHARED elf REQUIRED)
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
get_target_property(_libelf_static PkgConfig::LIBELF INTERFACE_LINK_LIBRARIES)
set_property(TARGET PkgConfig::LIBELF PROPERTY INTERFACE_LINK_LIBRARIES
  "$<IF:$<STREQUAL:$<TARGET_PROPERTY:TYPE>,MODULE_LIBRARY>,${HANGPY_LIBELF_SHARED},${_libelf_static};${HANGPY_Z_STATIC}>")
