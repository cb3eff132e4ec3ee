#!/usr/bin/env bash
# How the committed golden inputs in inputs/ were made (run once; the files are committed so
# that the golden digests do not depend on the ImageMagick, libx264 or libvpx of the host).
# Usage: make-inputs.sh MEDIA_DIR   (MEDIA_DIR from `make xform-media`)
set -euo pipefail
media=${1:?usage: make-inputs.sh MEDIA_DIR}
here=$(cd "$(dirname "$0")" && pwd)
out=$here/inputs
mkdir -p "$out"
img=$media/images vid=$media/video
cp "$img/photo_q90_420.jpg" "$out/photo_420.jpg"            # 500x375 4:2:0, the benchmark input
cp "$img/exif_orient6.jpg" "$out/exif_orient6.jpg"          # 333x251, EXIF orientation 6
cp "$img/ffmpeg_420.jpg" "$out/ffmpeg_420.jpg"              # FFmpeg's own mjpeg bitstream
convert "$img/photo_q90_420.jpg" -resize 320x240 -quality 88 -sampling-factor 1x1 "$out/small_444.jpg"
convert "$img/photo_q90_420.jpg" -resize 320x240 -quality 85 -sampling-factor 2x1 "$out/small_422.jpg"
convert "$img/photo_q90_420.jpg" -resize 320x240 -quality 90 -interlace JPEG "$out/small_progressive.jpg"
convert "$img/photo_q90_420.jpg" -resize 320x240 -colorspace Gray -quality 90 "$out/small_gray.jpg"
convert "$img/photo_q90_420.jpg" -resize 200x150 -colorspace CMYK -quality 92 "$out/small_cmyk.jpg"
convert "$img/rgba8.png" -resize 200x150 png32:"$out/small_rgba.png"
convert "$img/palette.png" -resize 200x150 -colors 64 png8:"$out/small_palette.png"
convert "$img/photo_q90_420.jpg" -resize 320x240 -quality 85 "$out/small_lossy.webp"
cp "$vid/tiny.mp4" "$out/tiny.mp4"                          # H.264
cp "$vid/tiny_vp9.webm" "$out/tiny_vp9.webm"
cp "$vid/tiny_mpeg4.mp4" "$out/tiny_mpeg4.mp4"               # MPEG-4 part 2 (IDCT)
cp "$vid/tiny_hevc10.mkv" "$out/tiny_hevc10.mkv"             # HEVC 10-bit
cp "$vid/h264_bframes.mp4" "$out/h264_bframes.mp4"           # B-frames, several GOPs (seeks)
