"""hatchling build hook of hangpy's wheel (pyproject.toml): the platform tag and the scripts.

- The tag: py3-none-$HANGPY_WHEEL_PLATFORM (scripts/package sets manylinux_2_17_x86_64 or
  manylinux_2_17_aarch64 once it has checked that the programs need no glibc newer than 2.17).
  The Python code runs on any Python 3; the programs are the machine's.
- The scripts: Debian 12's hatchling (1.12) cannot put files in the wheel's .data/scripts/ (its
  `shared-scripts` came later), which pip installs into the environment's bin/, executable. So
  once hatchling has written the wheel, this hook adds each file of the table
  [tool.hatch.build.targets.wheel.hooks.custom.shared-scripts] (staging path = name) there and
  rewrites RECORD: coreanalyze runs straight from the venv's bin/, with no Python start-up.
"""
import base64
import csv
import hashlib
import io
import os
import stat
import zipfile

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class HangpyWheelHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def scripts(self):
        """[(path in the staging directory, name in bin/)]."""
        table = self.config.get("shared-scripts", {})
        return [(os.path.join(self.root, source), name) for source, name in sorted(table.items())]

    def initialize(self, version, build_data):
        platform = os.environ.get("HANGPY_WHEEL_PLATFORM", "")
        if not platform:
            raise RuntimeError("HANGPY_WHEEL_PLATFORM is not set: scripts/package builds this "
                               "wheel (manylinux_2_17_x86_64, manylinux_2_17_aarch64)")
        build_data["tag"] = "py3-none-" + platform
        build_data["pure_python"] = False
        # What scripts/package stages beside this directory's files (pyproject.toml).
        needed = [path for path, _ in self.scripts()] + [
            os.path.join(self.root, "hangpy", "gdb", "share", "hangpy", "hangpy.py"),
            os.path.join(self.root, "share", "man", "man1", "coreanalyze.1.gz")]
        missing = [path for path in needed if not os.path.isfile(path)]
        if missing or not os.path.isdir(os.path.join(self.root, "hangpy", "gdb", "lib")):
            raise RuntimeError("not staged by scripts/package: %s"
                               % (", ".join(missing) or "hangpy/gdb/lib/"))

    def finalize(self, version, build_data, artifact_path):
        add_scripts(artifact_path, self.scripts())


def record_hash(content):
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def add_scripts(wheel, scripts):
    """Rewrites `wheel` with each (path, name) of `scripts` as NAME-VERSION.data/scripts/name,
    mode 755, listed in RECORD; the .dist-info stays last, RECORD last of all (PEP 427)."""
    with zipfile.ZipFile(wheel) as old:
        infos = old.infolist()
        record_name = [info.filename for info in infos
                       if info.filename.endswith(".dist-info/RECORD")][0]
        dist_info = record_name[:-len("RECORD")]
        data_scripts = dist_info[:-len(".dist-info/")] + ".data/scripts/"
        rows = list(csv.reader(io.StringIO(old.read(record_name).decode("utf-8"))))
        rows = [row for row in rows if row and row[0] != record_name]
        rewritten = wheel + ".scripts"
        with zipfile.ZipFile(rewritten, "w", zipfile.ZIP_DEFLATED) as new:
            for info in infos:
                if not info.filename.startswith(dist_info):
                    new.writestr(info, old.read(info))
            for path, name in scripts:
                with open(path, "rb") as source:
                    content = source.read()
                # The time stamp hatchling gave every file (reproducible: SOURCE_DATE_EPOCH).
                info = zipfile.ZipInfo(data_scripts + name, infos[0].date_time)
                info.external_attr = (stat.S_IFREG | 0o755) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                new.writestr(info, content)
                rows.append([info.filename, record_hash(content), str(len(content))])
            for info in infos:
                if info.filename.startswith(dist_info) and info.filename != record_name:
                    new.writestr(info, old.read(info))
            rows.append([record_name, "", ""])
            text = io.StringIO()
            csv.writer(text, lineterminator="\n").writerows(rows)
            record_info = old.getinfo(record_name)
            new.writestr(record_info, text.getvalue().encode("utf-8"))
    os.replace(rewritten, wheel)
