"""examples/train_loop.py runs against a `newtricks cluster up` cluster (the session's): it
uploads the images as labeled samples, trains on their labels, and its samples come from the
DataNodes (the session cluster's never shed: offload.cpu.high=1)."""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "train_loop.py")


def test_example_train_loop(cluster, media):
    images = os.path.join(media, "images")
    r = subprocess.run([sys.executable, EXAMPLE, "--cluster-dir", cluster.base, "--newtricks", cluster.cli,
                        "--media", images, "--dataset", "/example/imgs", "--steps", "6",
                        "--user", cluster.superuser], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-3000:]
    out = r.stdout
    print(out)
    assert "uploaded and indexed" in out and "hint " in out, out
    assert "6 steps" in out, out
    assert "step   5" in out, out
    # The samples printed carry the label and caption the example uploaded for that image.
    files = sorted(f for f in os.listdir(images) if f.lower().endswith((".jpg", ".jpeg", ".png", ".webp")))
    printed = re.findall(r"^sample (\d+)  label (\d+)  caption '(.*)'  \((\w+)\)$", out, re.M)
    assert len(printed) == 3, out
    for key, label, cap, path in printed:
        i = int(key)
        assert int(label) == i % 4, (key, label)
        assert cap == "image %d of %s (class %d)" % (i, files[i], i % 4), (key, cap)
        assert path in ("offload", "raw", "local"), (key, path)
    labels = re.search(r"^step   5  loss [\d.]+  labels \[([\d, ]+)\]", out, re.M)
    assert labels and all(0 <= int(v) < 4 for v in labels.group(1).split(",")), out
    m = re.search(r"offloaded (\d+)%", out)
    assert m and int(m.group(1)) > 0, out
