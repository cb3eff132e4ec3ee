"""Python baselines for bench-xform's image pipeline, one thread:
JPEG -> RandomResizedCrop(224) (torchvision's get_params, bilinear) -> random hflip ->
normalize (ImageNet mean/std) -> CHW float32 numpy array.

usage: image_baselines.py pillow|pillow-decode|cv2|torchvision FILE N REPS
pillow: Pillow(-SIMD) decode/crop/resize + numpy; cv2: simplejpeg decode + OpenCV resize;
torchvision: torchvision.io.decode_jpeg of the bytes (a uint8 tensor made once) and the v2
transforms as torchvision's docs advise for tensors: RandomResizedCrop(224) on the uint8
image (bilinear, antialias), RandomHorizontalFlip, ToDtype(float32, scale=True), Normalize;
torch limited to one thread, its own RNG (seeded) drawing the crops.
Prints one "REP wall_ips=<x> cpu_ips=<y>" line per repetition.
"""
import io
import math
import os
import random
import sys
import time

import numpy as np

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
# (x/255 - mean)/std == x*A + B with per-channel A, B.
A = (1.0 / (255.0 * STD)).astype(np.float32)
B = (-MEAN / STD).astype(np.float32)


def rrc_params(rng, width, height, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
    area = width * height
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target_area = area * rng.uniform(scale[0], scale[1])
        aspect = math.exp(rng.uniform(log_ratio[0], log_ratio[1]))
        w = int(round(math.sqrt(target_area * aspect)))
        h = int(round(math.sqrt(target_area / aspect)))
        if 0 < w <= width and 0 < h <= height:
            return rng.randint(0, height - h), rng.randint(0, width - w), h, w
    in_ratio = width / height
    if in_ratio < min(ratio):
        w = width
        h = int(round(w / min(ratio)))
    elif in_ratio > max(ratio):
        h = height
        w = int(round(h * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def to_chw(arr):
    out = arr.astype(np.float32)
    out *= A
    out += B
    return np.ascontiguousarray(out.transpose(2, 0, 1))


def make_pillow():
    from PIL import Image

    def one(data, rng):
        im = Image.open(io.BytesIO(data))
        im = im.convert("RGB")
        i, j, h, w = rrc_params(rng, im.width, im.height)
        im = im.resize((224, 224), Image.BILINEAR, box=(j, i, j + w, i + h))
        if rng.random() < 0.5:
            im = im.transpose(Image.FLIP_LEFT_RIGHT)
        return to_chw(np.asarray(im))

    return one


def make_pillow_decode():
    from PIL import Image

    def one(data, rng):
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))

    return one


def make_cv2():
    import cv2
    import simplejpeg

    cv2.setNumThreads(1)

    def one(data, rng):
        a = simplejpeg.decode_jpeg(data, colorspace="RGB")
        height, width = a.shape[:2]
        i, j, h, w = rrc_params(rng, width, height)
        a = cv2.resize(a[i:i + h, j:j + w], (224, 224), interpolation=cv2.INTER_LINEAR)
        if rng.random() < 0.5:
            a = cv2.flip(a, 1)
        return to_chw(a)

    return one


def make_torchvision():
    import torch
    from torchvision.io import decode_jpeg
    from torchvision.transforms import v2

    torch.set_num_threads(1)
    torch.manual_seed(1)
    t = v2.Compose([
        v2.RandomResizedCrop(size=(224, 224), antialias=True),
        v2.RandomHorizontalFlip(),
        v2.ToDtype(torch.float32, scale=True),
        v2.Normalize(mean=MEAN.tolist(), std=STD.tolist()),
    ])
    src = {}

    def one(data, rng):
        if "t" not in src:
            src["t"] = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        return t(decode_jpeg(src["t"]))

    return one


def main():
    mode, path, n, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    data = open(path, "rb").read()
    one = {"pillow": make_pillow, "pillow-decode": make_pillow_decode, "cv2": make_cv2,
           "torchvision": make_torchvision}[mode]()
    rng = random.Random(1)
    for _ in range(20):
        one(data, rng)
    for _ in range(reps):
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            out = one(data, rng)
        assert mode == "pillow-decode" or (tuple(out.shape) == (3, 224, 224) and str(out.dtype) in ("float32", "torch.float32"))
        w, c = time.perf_counter() - w0, time.process_time() - c0
        print("REP wall_ips=%.1f cpu_ips=%.1f" % (n / w, n / c), flush=True)
    if mode == "pillow":
        import PIL
        print("INFO pillow", PIL.__version__, file=sys.stderr)
    if mode == "torchvision":
        import torch
        import torchvision
        print("INFO torchvision", torchvision.__version__, "torch", torch.__version__, file=sys.stderr)


if __name__ == "__main__":
    main()
