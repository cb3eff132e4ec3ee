"""The tokenizers side of bench/tokenize/run.sh: encodes the reference corpus (docs.bin of
xformgraph/tokenize/testdata/reference.py) with each tokenizer.json, one thread, one document
per call (encode) and all documents in one call (encode_batch, sequential with
TOKENIZERS_PARALLELISM=false and RAYON_NUM_THREADS=1), after one untimed pass. Prints one line
per tokenizer and mode:  REP <name> <mode> cpu_mbs=<MB per CPU-second> cpu_tps=<tokens per
CPU-second> wall_mbs=<MB per second> tokens=<n>
"""

import os
import struct
import sys
import time

os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ["RAYON_NUM_THREADS"] = "1"

from tokenizers import Tokenizer  # noqa: E402


def main():
    d = sys.argv[1]
    b = open(os.path.join(d, "docs.bin"), "rb").read()
    n = struct.unpack_from("<I", b)[0]
    off, docs = 4, []
    for _ in range(n):
        (l,) = struct.unpack_from("<I", b, off)
        docs.append(b[off + 4:off + 4 + l].decode("utf-8"))
        off += 4 + l
    size = sum(len(x.encode("utf-8")) for x in docs)
    for name in sys.argv[2:]:
        t = Tokenizer.from_file(os.path.join(d, name + ".json"))
        t.no_truncation()
        t.no_padding()
        for mode in ("encode", "encode_batch"):
            run = (lambda: sum(len(t.encode(x).ids) for x in docs)) if mode == "encode" else \
                (lambda: sum(len(e.ids) for e in t.encode_batch(docs)))
            run()  # warm-up (and the BPE cache, as the Go benchmark's first iteration)
            c0, w0 = time.process_time(), time.time()
            tokens = run()
            cpu, wall = time.process_time() - c0, time.time() - w0
            print("REP %s %s cpu_mbs=%.3f cpu_tps=%.0f wall_mbs=%.3f tokens=%d" % (
                name, mode, size / cpu / 1e6, tokens / cpu, size / wall / 1e6, tokens), flush=True)


main()
