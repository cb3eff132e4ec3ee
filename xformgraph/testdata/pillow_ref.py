"""Reference outputs from Pillow for xformgraph's image tests.

usage: pillow_ref.py decode PATH
       pillow_ref.py resize PATH OUT_W OUT_H FILTER X0 Y0 X1 Y1 FLIP
Writes "W H C\n" then the raw 8-bit RGB pixels to stdout. decode applies EXIF orientation
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
    if mode == "resize":
        w, h, filt = int(sys.argv[3]), int(sys.argv[4]), FILTERS[sys.argv[5]]
        box = tuple(int(v) for v in sys.argv[6:10])
        im = im.crop(box).resize((w, h), filt)
        if sys.argv[10] == "1":
            im = im.transpose(Image.FLIP_LEFT_RIGHT)
    out = sys.stdout.buffer
    out.write(b"%d %d 3\n" % im.size)
    out.write(im.tobytes())


if __name__ == "__main__":
    main()
