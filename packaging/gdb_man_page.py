# Writes hangpy-gdb.1 from the gdb commands' own help texts: run inside gdb after `import hangpy`
# (packaging/CMakeLists.txt), so the page says what `help COMMAND` says and is never kept by hand.
# help2man makes coreanalyze.1 but cannot make this one: it reads one program's --help and lays
# out only lines that start with an option's dash.
import os

import gdb
import hangpy


def roff(text):
    """Text as roff: backslashes and dashes escaped, no line read as a request."""
    lines = []
    for line in text.replace("\\", "\\e").replace("-", "\\-").splitlines():
        lines.append("\\&" + line if line.startswith((".", "'")) else line)
    return "\n".join(lines)


def command_entry(name):
    text = gdb.execute("help " + name, to_string=True)
    # gdb adds its list of subcommands and its own hints to a prefix command's help.
    text = text.split("\nList of %s subcommands:" % name)[0]
    summary, _, rest = text.strip().partition("\n")
    # The rest as gdb prints it (usage lines, aligned columns): not filled.
    return "\n".join([".TP", ".B " + roff(name), roff(summary), ".nf", roff(rest.strip()), ".fi"])


version = os.environ["HANGPY_VERSION"]
page = [
    '.TH HANGPY\\-GDB 1 "" "hangpy %s" "User Commands"' % version,
    ".SH NAME",
    "hangpy\\-gdb \\- " + roff(hangpy.__doc__.partition(": ")[2]),
    ".SH SYNOPSIS",
    "In ~/.gdbinit (or a file in /etc/gdb/gdbinit.d/):",
    ".PP",
    ".B source PREFIX/share/hangpy/hangpy.gdb",
    ".PP",
    "then in gdb:",
    ".PP",
    ".B load hangpy",
    ".SH DESCRIPTION",
    "hangpy's gdb module reads the Python stacks of the process or core gdb has open with the",
    "same engine as",
    ".BR coreanalyze (1),",
    "through gdb's memory reads and the ELF symbols gdb has loaded: no Python debug info is",
    "needed. The init file puts the module on gdb's Python path and makes",
    ".B load hangpy",
    "load it (gdb's own",
    ".B load",
    "is not available in a session that sourced it;",
    ".B python import hangpy",
    "works too).",
    ".SH COMMANDS",
]
page += [command_entry(name) for name in hangpy.command_names]
page += [
    ".SH FILES",
    ".TP",
    ".I PREFIX/share/hangpy/hangpy.gdb",
    "the init file to source (PREFIX is where hangpy was installed, /usr/local by default)",
    ".TP",
    ".I PREFIX/share/hangpy/hangpy.py",
    "the same init as Python, which finds the module beside itself (an unpacked tarball)",
    ".TP",
    ".I /etc/gdb/gdbinit.d/hangpy.gdb",
    "installed by the Debian package: every gdb session gets load hangpy",
    ".TP",
    ".I PREFIX/lib/hangpy/python/",
    "the module, built for the Python that gdb embeds",
    ".SH SEE ALSO",
    ".BR coreanalyze (1),",
    ".BR gdb (1);",
    "docs/gdb.md in hangpy's source.",
]
with open(os.environ["HANGPY_MAN_PAGE"], "w") as out:
    out.write("\n".join(page) + "\n")
