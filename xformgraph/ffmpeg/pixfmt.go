package ffmpeg

// #include "helpers.h"
import "C"

// PixelFormat is an AVPixelFormat.
type PixelFormat int

// Pixel formats newtricks produces or names.
const (
	PixFmtNone        PixelFormat = C.AV_PIX_FMT_NONE
	PixFmtRGB24       PixelFormat = C.AV_PIX_FMT_RGB24
	PixFmtRGBA        PixelFormat = C.AV_PIX_FMT_RGBA
	PixFmtGray8       PixelFormat = C.AV_PIX_FMT_GRAY8
	PixFmtYUV420P     PixelFormat = C.AV_PIX_FMT_YUV420P
	PixFmtYUV420P10LE PixelFormat = C.AV_PIX_FMT_YUV420P10LE
)

// String is FFmpeg's name for the format ("yuv420p"...).
func (p PixelFormat) String() string {
	s := C.av_get_pix_fmt_name(int32(p))
	if s == nil {
		return "none"
	}
	return C.GoString(s)
}

// HasAlpha reports whether the format carries an alpha channel.
func (p PixelFormat) HasAlpha() bool {
	d := C.av_pix_fmt_desc_get(int32(p))
	return d != nil && d.flags&C.AV_PIX_FMT_FLAG_ALPHA != 0
}
