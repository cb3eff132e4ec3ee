"""Build hook: bundles libnewtricks (the Go transforms, reader and Kerberos client, built as a C
shared library) into the wheel.

The library comes from $NEWTRICKS_LIB when set (the Makefile builds it once and
passes it), else it is built here with `go build -buildmode=c-shared` when this directory sits
in the newtricks repository and Go is installed. Without either, the package installs
without it: hints work, and newtricks.transforms raises LibraryError naming what is missing.
Everything else is in pyproject.toml.
"""

import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LIB = "libnewtricks.so"


class BuildPyWithNative(build_py):
    def run(self):
        super().run()
        dest_dir = os.path.abspath(os.path.join(self.build_lib, "newtricks", "_native"))
        os.makedirs(dest_dir, exist_ok=True)
        dest = os.path.join(dest_dir, LIB)
        src = os.environ.get("NEWTRICKS_LIB")
        if src:
            if not os.path.isfile(src):
                raise SystemExit("NEWTRICKS_LIB=%s: no such file" % src)
            shutil.copyfile(os.path.abspath(src), dest)
            return
        go = shutil.which("go")
        if go and os.path.isfile(os.path.join(REPO, "go.mod")):
            env = dict(os.environ, GOAMD64=os.environ.get("GOAMD64", "v1"), CGO_ENABLED="1")
            print("building %s with %s" % (LIB, go), file=sys.stderr)
            subprocess.check_call([go, "build", "-buildmode=c-shared", "-o", dest, "./cmd/libnewtricks"],
                                  cwd=REPO, env=env)
            header = os.path.splitext(dest)[0] + ".h"
            if os.path.exists(header):
                os.remove(header)
            return
        print("warning: neither NEWTRICKS_LIB nor a Go toolchain in the newtricks "
              "repository: installing without libnewtricks (newtricks.transforms unavailable)",
              file=sys.stderr)


class BinaryDistribution(Distribution):
    """The wheel carries a native library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithNative}, distclass=BinaryDistribution)
