#!/usr/bin/env python3
"""The gdb module is built on CPython's Stable ABI (Py_LIMITED_API 3.6): every Python 3.6 or newer
must load it. Each installed host interpreter of tests/integration/interpreters.py (3.6 on)
imports it outside gdb: the import must stop only at its own `import gdb` (ModuleNotFoundError),
never at an undefined symbol (CPython dlopens extensions with RTLD_NOW, so every symbol the
module needs is resolved then). Exits 77 when no such interpreter or no module is there."""
import argparse
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
import interpreters  # noqa: E402
from results import Results  # noqa: E402

PROBE = ("import sys; sys.path.insert(0, sys.argv[1]); sys.setdlopenflags(2)\n"  # RTLD_NOW
         "try:\n    import hangpy\nexcept ModuleNotFoundError as error:\n"
         "    print('missing', error.name)\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module-dir", required=True)
    args = parser.parse_args()
    modules = glob.glob(os.path.join(args.module_dir, "hangpy*.so"))
    if [os.path.basename(m) for m in modules] != ["hangpy.abi3.so"]:
        print("SKIP: want exactly hangpy.abi3.so in %s, found %s" % (args.module_dir, modules))
        return 77
    results = Results()
    for name, interpreter in interpreters.each_installed(interpreters.names("integration"), results):
        if interpreter.root is not None:
            continue  # chroots: their glibc may be older than the one the module was built with
        version = subprocess.run([interpreter.executable, "-c",
                                  "import sys, sysconfig; sys.stdout.write('%d %d %s %d' % ("
                                  "sys.version_info[0], sys.version_info[1], "
                                  "sysconfig.get_config_var('Py_GIL_DISABLED') or 0, "
                                  "hasattr(sys, 'getobjects')))"],
                                 stdout=subprocess.PIPE, universal_newlines=True).stdout.split()
        if [int(part) for part in version[:2]] < [3, 6]:
            continue
        # A free-threaded Python, or one built with Py_TRACE_REFS (--with-pydebug up to 3.7:
        # PyModule_Create2 is PyModule_Create2TraceRefs there), loads no Stable-ABI (abi3) module,
        # by design; no gdb embeds one.
        if version[2] == "1" or version[3] == "1":
            results.report("SKIP", "%s: loads the Stable-ABI module" % name,
                           ["a %s build imports no abi3 module"
                            % ("free-threaded" if version[2] == "1" else "Py_TRACE_REFS")])
            continue
        result = subprocess.run([interpreter.executable, "-c", PROBE, args.module_dir],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                universal_newlines=True, timeout=60)
        problems = []
        if result.stdout.strip() != "missing gdb":
            problems.append("import gave %r (exit %d), want only the missing gdb module"
                            % (result.stdout.strip()[-400:], result.returncode))
        results.check("%s: loads the Stable-ABI module" % name, problems)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
