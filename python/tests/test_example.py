"""examples/train_loop.py runs against a `newtricks cluster up` cluster (the session's)."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "train_loop.py")


def test_example_train_loop(cluster, media):
    r = subprocess.run([sys.executable, EXAMPLE, "--cluster-dir", cluster.base, "--newtricks", cluster.cli,
                        "--media", os.path.join(media, "images"), "--dataset", "/example/imgs", "--steps", "6",
                        "--user", cluster.superuser], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-3000:]
    out = r.stdout
    print(out)
    assert "uploaded and indexed" in out and "hint " in out, out
    assert "6 steps" in out, out
    assert "offloaded" in out and "step   5" in out, out
