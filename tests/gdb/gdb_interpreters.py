"""The interpreters the gdb tests run under, and what each one allows.

Names come from tests/integration/interpreters.py (which says where each one lives). Adding a
version here is one line, once the engine has its layout table.
"""

# name -> options
#   hide_debug_info: run hangpy with gdb's debug-file-directory pointed away, proving it needs
#                    no Python debug info (Debian's python3.11 is stripped; pyenv's builds
#                    carry their debug info inside the binary, so there it cannot be hidden)
#   libpython:       Debian's libpython.py (python3.11-dbg) is installed for it: compare
GDB_INTERPRETERS = {
    "debian-3.11": {"hide_debug_info": True, "libpython": True},
    "pyenv-3.11": {"hide_debug_info": False, "libpython": False},
    "pyenv-2.7": {"hide_debug_info": False, "libpython": False},
    "pyenv-3.6": {"hide_debug_info": False, "libpython": False},
    "pyenv-3.7": {"hide_debug_info": False, "libpython": False},
    "pyenv-3.8": {"hide_debug_info": False, "libpython": False},
    "pyenv-3.9": {"hide_debug_info": False, "libpython": False},
    "pyenv-3.10": {"hide_debug_info": False, "libpython": False},
    "pyenv-3.12": {"hide_debug_info": False, "libpython": False},
    "pyenv-3.13": {"hide_debug_info": False, "libpython": False},
    "local-3.13t": {"hide_debug_info": False, "libpython": False},
    "local-3.14t": {"hide_debug_info": False, "libpython": False},
}
