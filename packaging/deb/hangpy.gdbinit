# hangpy (Debian package): every gdb on this machine gets `load hangpy`. Note: hangpy's init takes
# the command name `load` (gdb's own `load`, downloading a program to a remote target, then answers
# with how to get it back: `gdb -nx`, or remove this file). /usr/share/doc/hangpy/README.md.gz
source /usr/share/hangpy/hangpy.gdb
