package ffmpeg

// #include "helpers.h"
import "C"

// Frame is an AVFrame: one decoded picture.
type Frame struct {
	c *C.AVFrame
}

// NewFrame allocates an empty frame.
func NewFrame() (*Frame, error) {
	f := C.av_frame_alloc()
	if f == nil {
		return nil, ErrNoMem
	}
	return &Frame{c: f}, nil
}

// Free releases the frame. Safe to call more than once.
func (f *Frame) Free() {
	if f.c != nil {
		C.nt_frame_free(f.c)
		f.c = nil
	}
}

// Unref drops the picture, keeping the frame for reuse.
func (f *Frame) Unref() { C.av_frame_unref(f.c) }

// Width of the picture in pixels.
func (f *Frame) Width() int { return int(f.c.width) }

// Height of the picture in pixels.
func (f *Frame) Height() int { return int(f.c.height) }

// PixFmt is the picture's pixel format.
func (f *Frame) PixFmt() PixelFormat { return PixelFormat(f.c.format) }

// PTS is the frame's presentation timestamp, or NoPTS.
func (f *Frame) PTS() int64 { return int64(f.c.pts) }

// BestEffortTimestamp is FFmpeg's guess of the presentation timestamp (pts, else a
// heuristic from dts), or NoPTS.
func (f *Frame) BestEffortTimestamp() int64 { return int64(f.c.best_effort_timestamp) }

// Concealed reports whether the decoder flagged the frame as damaged: decode errors it
// concealed (decode_error_flags) or a corrupt frame (AV_FRAME_FLAG_CORRUPT).
func (f *Frame) Concealed() bool {
	return f.c.decode_error_flags != 0 || f.c.flags&C.AV_FRAME_FLAG_CORRUPT != 0
}

// IsKey reports whether the frame is a key frame.
func (f *Frame) IsKey() bool { return f.c.key_frame != 0 }

// Colorspace is the AVColorSpace of YUV pictures (AVCOL_SPC_*).
func (f *Frame) Colorspace() int { return int(f.c.colorspace) }

// FullRange reports full-range ("JPEG") YUV levels.
func (f *Frame) FullRange() bool { return f.c.color_range == C.AVCOL_RANGE_JPEG }

// RotateInto writes f turned clockwise by deg (90, 180 or 270) into dst, working on the
// decoded planes before any conversion, as the ffmpeg CLI's autorotation does. Formats it
// cannot rotate in place of a conversion (packed, 4:2:2) give ErrNotSupported.
func (f *Frame) RotateInto(dst *Frame, deg int) error {
	if f.c == nil || dst.c == nil {
		return ErrClosed
	}
	return newError(C.nt_frame_rotate(f.c, dst.c, C.int(deg)))
}
