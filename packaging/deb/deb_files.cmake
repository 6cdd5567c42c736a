# What the packages install besides the tools (packaging/CMakeLists.txt, HANGPY_PORTABLE): the
# system-wide gdb init of the .deb, Debian's documentation files and lintian's overrides.
option(HANGPY_SYSTEM_GDBINIT "Install /etc/gdb/gdbinit.d/hangpy.gdb (the Debian package)" OFF)
if(HANGPY_SYSTEM_GDBINIT AND TARGET hangpy_gdb)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/hangpy.gdbinit DESTINATION /etc/gdb/gdbinit.d
          RENAME hangpy.gdb)
endif()
# Debian's documentation files: the copyright (licences of the libraries linked in) and the
# changelogs, compressed as policy asks.
set(_doc ${CMAKE_INSTALL_DATADIR}/doc/hangpy)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/copyright DESTINATION ${_doc})
string(TIMESTAMP _now "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${CMAKE_BINARY_DIR}/deb-control/changelog.Debian "hangpy (${PROJECT_VERSION}-1) unstable; urgency=medium

  * Built by scripts/package (CPack) from the portable build; the changes
    are in changelog.gz.

 -- hangpy developers <hangpy@example.org>  ${_now}
")
install(FILES ${CMAKE_BINARY_DIR}/deb-control/changelog.Debian DESTINATION ${_doc})
install(FILES ${CMAKE_CURRENT_LIST_DIR}/lintian-overrides DESTINATION
        ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME hangpy)

install(FILES ${PROJECT_SOURCE_DIR}/CHANGELOG.md DESTINATION ${_doc} RENAME changelog)
