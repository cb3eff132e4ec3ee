"""Reference frames for the xformgraph/video tests: decord's RGB24 frames of a clip.

Usage: decord_ref.py CLIP WIDTH HEIGHT [INDEX...]
decord.VideoReader(CLIP, num_threads=1) with its defaults (WIDTH HEIGHT 0 0: native size;
otherwise width=WIDTH, height=HEIGHT, decord's resize), frames INDEX... (all frames when no index
is given), read in one sequential pass from frame 0 (get_batch of 0..max(INDEX)): decord's
seeks land on wrong frames in some clips with B-frames (HEVC open GOPs, MPEG-4), and the
tests compare pixels, not seeking. Writes the frames, packed H x W x 3 uint8 each, to stdout, and one line
"decord VERSION frames N WIDTHxHEIGHT" to stderr.
"""
import sys

import decord


def main():
    clip, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    kw = {"num_threads": 1}
    if w > 0 or h > 0:
        kw.update(width=w, height=h)
    vr = decord.VideoReader(clip, **kw)
    idx = [int(i) for i in sys.argv[4:]] or list(range(len(vr)))
    x = vr.get_batch(list(range(max(idx) + 1))).asnumpy()[idx]
    sys.stderr.write("decord %s frames %d %dx%d\n" % (decord.__version__, len(vr), x.shape[2], x.shape[1]))
    sys.stdout.buffer.write(x.tobytes())


if __name__ == "__main__":
    main()
