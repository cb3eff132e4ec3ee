#!/usr/bin/env bash
# Generates the image test media with ImageMagick (convert) and the ffmpeg CLI. Nothing is
# downloaded; output is deterministic for a given ImageMagick build (fixed -seed).
# Usage: gen-images.sh [OUT_DIR]   (default: xformgraph/testdata/media/images, git-ignored)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/media/images}
mkdir -p "$out"
cd "$out"
stamp=.done-v3
[ -f "$stamp" ] && { echo "image media up to date in $out"; exit 0; }

# A photo-like source: fractal plasma plus mild noise and an edge pattern, so JPEG has
# real entropy and resamplers see both smooth areas and edges.
src() { # W H OUT
  convert -seed 7 -size "$1x$2" plasma:fractal -blur 0x0.7 \
    \( -size "$1x$2" pattern:checkerboard -blur 0x0.5 \) -compose overlay -composite \
    -seed 3 -attenuate 0.15 +noise Gaussian "$3"
}
src 500 375 src500.ppm
src 333 251 src333.ppm
src 1024 768 src1024.ppm

convert src500.ppm -quality 90 -sampling-factor 2x2 photo_q90_420.jpg       # benchmark input
convert src500.ppm -quality 90 -sampling-factor 1x1 baseline_444.jpg
convert src500.ppm -quality 85 -sampling-factor 2x1 baseline_422.jpg
convert src500.ppm -quality 90 -interlace JPEG progressive.jpg
convert src500.ppm -colorspace Gray -quality 90 gray.jpg
convert src500.ppm -colorspace CMYK -quality 92 cmyk.jpg
convert src333.ppm -quality 90 odd_333x251.jpg
convert src1024.ppm -quality 90 large_1024.jpg
# ffmpeg's mjpeg encoder writes a different (non-libjpeg) bitstream: a second encoder.
ffmpeg -nostdin -loglevel error -y -i src500.ppm -q:v 3 -pix_fmt yuvj420p ffmpeg_420.jpg
# EXIF orientation 6 (rotate 90 CW to display): APP1 inserted after SOI by hand.
{ printf '\xff\xd8'
  printf '\xff\xe1\x00\x22Exif\x00\x00II\x2a\x00\x08\x00\x00\x00\x01\x00\x12\x01\x03\x00\x01\x00\x00\x00\x06\x00\x00\x00\x00\x00\x00\x00'
  tail -c +3 odd_333x251.jpg; } > exif_orient6.jpg

convert src500.ppm png24:rgb8.png
convert src500.ppm -alpha set -channel A -fx '0.3+0.7*i/w' +channel png32:rgba8.png
convert src500.ppm -depth 16 png48:rgb16.png
convert src500.ppm -alpha set -channel A -fx 'j/h' +channel -depth 16 png64:rgba16.png
convert src500.ppm -colorspace Gray -depth 8 png:gray8.png
convert src500.ppm -colors 200 png8:palette.png

convert src500.ppm -quality 90 lossy.webp
convert src500.ppm -define webp:lossless=true lossless.webp
convert src500.ppm -alpha set -channel A -fx '0.5+0.5*i/w' +channel -quality 90 lossy_alpha.webp

rm -f src*.ppm
touch "$stamp"
echo "image media written to $out"
ls -la "$out"
