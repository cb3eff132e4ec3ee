"""Reference outputs from Pillow for xformgraph's image tests.

usage: pillow_ref.py decode PATH
       pillow_ref.py resize PATH OUT_W OUT_H FILTER X0 Y0 X1 Y1 FLIP
       pillow_ref.py tensor PATH OUT_W OUT_H FILTER X0 Y0 X1 Y1 FLIP
Writes "W H C\n" then the raw 8-bit RGB pixels to stdout; tensor writes "W H C f32\n" then
the CHW float32 (little-endian) of torchvision's ToTensor + Normalize(ImageNet mean, std)
applied to the resize result. decode applies EXIF orientation
(ImageOps.exif_transpose) and convert("RGB"), as a torchvision loader does; resize crops
the box first and then resizes, as torchvision's resized_crop does with PIL images.
"""
import sys
from PIL import Image, ImageOps

FILTERS = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "area": Image.BOX, "nearest": Image.NEAREST}


def load(path):
    im = Image.open(path)
    im = ImageOps.exif_transpose(im)
    return im.convert("RGB")


def main():
    mode, path = sys.argv[1], sys.argv[2]
    im = load(path)
    if mode in ("resize", "tensor"):
        w, h, filt = int(sys.argv[3]), int(sys.argv[4]), FILTERS[sys.argv[5]]
        box = tuple(int(v) for v in sys.argv[6:10])
        im = im.crop(box).resize((w, h), filt)
        if sys.argv[10] == "1":
            im = im.transpose(Image.FLIP_LEFT_RIGHT)
    out = sys.stdout.buffer
    if mode == "tensor":
        import numpy as np
        mean = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(3, 1, 1)
        std = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(3, 1, 1)
        t = np.asarray(im, dtype=np.float32).transpose(2, 0, 1) / np.float32(255)
        t = (t - mean) / std
        out.write(b"%d %d 3 f32\n" % im.size)
        out.write(np.ascontiguousarray(t, dtype="<f4").tobytes())
        return
    out.write(b"%d %d 3\n" % im.size)
    out.write(im.tobytes())


if __name__ == "__main__":
    main()
