#!/usr/bin/env bash
# Generates the small video clips used by xformgraph/video and xformgraph/ops_video tests
# with the ffmpeg CLI (nothing is downloaded). Output: the directory given as $1, else
# $NEWTRICKS_XFORM_MEDIA/video (default xformgraph/testdata/media/video, git-ignored). Idempotent: a stamp holding this
# script's hash skips regeneration when nothing changed. Takes a few seconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${NEWTRICKS_XFORM_MEDIA:-$here/media}/video}
stamp=$out/.stamp
hash=$(sha256sum "$0" | cut -c1-16)
if [[ -f $stamp && $(cat "$stamp") == "$hash" ]]; then
	exit 0
fi
command -v ffmpeg >/dev/null || { echo "gen-video.sh: ffmpeg CLI not found" >&2; exit 1; }
mkdir -p "$out"
ff() { ffmpeg -hide_banner -loglevel error -nostdin -y "$@"; }
src() { echo "testsrc2=size=$1:rate=${2:-25}:duration=${3:-3}"; }

# H.264 High, B-frames (b-pyramid), several GOPs so that sparse samples seek.
ff -f lavfi -i "$(src 176x144)" -c:v libx264 -preset veryfast -bf 3 -g 24 -keyint_min 24 \
	-sc_threshold 0 -pix_fmt yuv420p "$out/h264_bframes.mp4"
# H.264 with one long GOP (250) and B-frames, like the benchmark clip.
ff -f lavfi -i "$(src 176x144 25 4)" -c:v libx264 -preset veryfast -bf 3 -g 250 \
	-pix_fmt yuv420p "$out/h264_gop250.mp4"
# HEVC 8-bit (open GOP, CRA + leading pictures) and 10-bit.
ff -f lavfi -i "$(src 176x144)" -c:v libx265 -preset ultrafast -tag:v hvc1 \
	-x265-params log-level=none:keyint=24:min-keyint=24:bframes=4:scenecut=0 -pix_fmt yuv420p "$out/hevc.mp4"
ff -f lavfi -i "$(src 176x144 25 2)" -c:v libx265 -preset ultrafast \
	-x265-params log-level=none:keyint=20:min-keyint=20:bframes=3 -pix_fmt yuv420p10le "$out/hevc10.mkv"
# VP9 (alt-ref hidden frames in superframes) and MPEG-4 part 2 with B-frames.
ff -f lavfi -i "$(src 176x144 25 2)" -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -g 20 -b:v 300k "$out/vp9.webm"
ff -f lavfi -i "$(src 176x144)" -c:v mpeg4 -bf 2 -g 24 -q:v 4 "$out/mpeg4.mp4"
# Streams without usable pts (frames numbered in decode output order): raw Annex B H.264
# and MPEG-4 with B-frames in AVI.
ff -i "$out/h264_bframes.mp4" -c copy -bsf:v h264_mp4toannexb -f h264 "$out/raw.h264"
ff -i "$out/mpeg4.mp4" -c copy "$out/mpeg4_bframes.avi"
# Variable frame rate: drop an irregular pattern of frames and keep their timestamps.
ff -f lavfi -i "$(src 176x144 30 3)" -vf "select='not(eq(mod(n\,7)\,3))*not(eq(mod(n\,11)\,5))+lt(n\,3)'" \
	-fps_mode vfr -c:v libx264 -preset veryfast -bf 2 -g 30 -pix_fmt yuv420p "$out/vfr.mkv"
# Rotation metadata (display matrix): 90 degrees.
# FFmpeg 5.1 writes the matrix from the rotate tag only when stream-copying.
ff -f lavfi -i "$(src 176x144 25 1)" -c:v libx264 -preset veryfast -bf 2 -pix_fmt yuv420p "$out/.rot.mp4"
ff -i "$out/.rot.mp4" -c copy -metadata:s:v:0 rotate=90 "$out/rotate90.mp4"
rm -f "$out/.rot.mp4"
# Odd dimensions: VP9 4:2:0 and H.264 4:4:4 (4:2:0 H.264 needs even sizes).
ff -f lavfi -i "$(src 320x240 25 1)" -vf scale=321:241 -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -g 10 "$out/odd_321x241.webm"
ff -f lavfi -i "$(src 320x240 25 1)" -vf scale=321:241 -c:v libx264 -preset veryfast -bf 2 -pix_fmt yuv444p "$out/odd_321x241_444.mp4"
# Colour conversion cases (native-size RGB equal to the ffmpeg CLI's and decord's): 720p
# H.264 tagged BT.709 (the matrix comes from the stream), full-range H.264 (decoded as
# yuvj420p), H.264 4:2:2, and VP9 with an odd width and an even height.
ff -f lavfi -i "$(src 1280x720 25 0.6)" -c:v libx264 -preset veryfast -bf 3 -g 12 -pix_fmt yuv420p \
	-colorspace bt709 -color_primaries bt709 -color_trc bt709 "$out/h264_720p_bt709.mp4"
ff -f lavfi -i "$(src 176x144 25 1)" -c:v libx264 -preset veryfast -bf 2 -g 12 -pix_fmt yuvj420p "$out/h264_fullrange.mp4"
ff -f lavfi -i "$(src 176x144 25 1)" -c:v libx264 -preset veryfast -bf 2 -g 12 -pix_fmt yuv422p "$out/h264_422.mp4"
ff -f lavfi -i "$(src 320x240 25 1)" -vf scale=321:240 -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -g 10 "$out/odd_321x240.webm"
# Tiny clip for the leak test.
ff -f lavfi -i "$(src 64x48 25 0.4)" -c:v libx264 -preset ultrafast -bf 2 -g 5 -pix_fmt yuv420p "$out/tiny.mp4"
# Tiny seeds for FuzzDecodeVideo, one per codec family.
ff -f lavfi -i "$(src 32x32 25 0.2)" -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -g 3 "$out/tiny_vp9.webm"
ff -f lavfi -i "$(src 32x32 25 0.2)" -c:v libx265 -preset ultrafast -x265-params log-level=none:keyint=3:bframes=1 \
	-pix_fmt yuv420p10le "$out/tiny_hevc10.mkv"
ff -f lavfi -i "$(src 32x32 25 0.2)" -c:v mpeg4 -bf 1 -g 3 "$out/tiny_mpeg4.mp4"
# A codec newtricks does not accept (FFV1) and a file with no video at all.
ff -f lavfi -i "$(src 64x48 25 0.4)" -c:v ffv1 "$out/unsupported_ffv1.mkv"
ff -f lavfi -i "sine=frequency=440:duration=0.5" -c:a pcm_s16le "$out/audio_only.wav"
ff -f lavfi -i "sine=frequency=440:duration=0.5" -c:a aac "$out/audio_only.m4a"
echo "$hash" >"$stamp"
