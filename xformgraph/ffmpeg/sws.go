package ffmpeg

// #include "helpers.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// ScaleFlags are SWS_* interpolation flags.
type ScaleFlags int

// Interpolation choices.
const (
	ScaleFastBilinear ScaleFlags = C.SWS_FAST_BILINEAR
	ScaleBilinear     ScaleFlags = C.SWS_BILINEAR
	ScaleBicubic      ScaleFlags = C.SWS_BICUBIC // the ffmpeg CLI's default
	ScaleArea         ScaleFlags = C.SWS_AREA
	ScalePoint        ScaleFlags = C.SWS_POINT
	ScaleLanczos      ScaleFlags = C.SWS_LANCZOS
	// ScaleAccurateRound is always on where swscale runs (see NewSwsContext); OR it in to
	// have swscale's accurate-rounding path also where NewSwsContext would use the portable
	// default conversion instead (same-size 8-bit 4:2:0 and 4:2:2 to RGB24). ScaleFullChroma
	// trades speed for chroma detail; OR it in.
	ScaleAccurateRound ScaleFlags = C.SWS_ACCURATE_RND
	ScaleFullChroma    ScaleFlags = C.SWS_FULL_CHR_H_INT
)

// SwsContext converts and resizes pictures (libswscale) from one fixed geometry and pixel
// format to another.
type SwsContext struct {
	c                     *C.struct_SwsContext // nil for the portable conversion
	open                  bool
	srcW, srcH            int
	srcFmt                PixelFormat
	dstW, dstH            int
	dstFmt                PixelFormat
	flags                 ScaleFlags
	colorspace, fullRange int
	coef                  C.nt_yuv2rgb // portable conversion's coefficients for colorspace, fullRange
}

// Exactness flags every swscale scaler gets: without them swscale picks SIMD paths (MMX/SSE/AVX2
// YUV->RGB, approximate rounding) whose output differs with the CPU, and xformgraph promises
// the same bytes on every host.
const scaleExact = C.SWS_BITEXACT | C.SWS_ACCURATE_RND

// PortableConversion reports whether NewSwsContext converts srcW x srcH srcFmt to dstW x dstH
// dstFmt with flags by newtricks' own portable C code rather than libswscale: for same-size
// yuv420p, yuvj420p, yuva420p, yuv422p and yuvj422p to RGB24 with an even height, exactly
// the cases where libswscale's default (flags without SWS_ACCURATE_RND) takes its unscaled
// special converter (ff_yuv2rgb_get_func_ptr: MMX/SSSE3 code on x86, whose output the
// ffmpeg CLI, decord and PyAV deliver), the portable code reproduces that converter's
// arithmetic on every CPU. Elsewhere swscale's scaler runs with SWS_BITEXACT |
// SWS_ACCURATE_RND, whose bytes are also the default flags' for a same-size conversion
// (plain C on every CPU).
func PortableConversion(srcW, srcH int, srcFmt PixelFormat, dstW, dstH int, dstFmt PixelFormat, flags ScaleFlags) bool {
	if srcW != dstW || srcH != dstH || dstFmt != PixFmtRGB24 || dstH%2 != 0 || flags&ScaleAccurateRound != 0 {
		return false
	}
	switch srcFmt {
	case C.AV_PIX_FMT_YUV420P, C.AV_PIX_FMT_YUVJ420P, C.AV_PIX_FMT_YUVA420P, C.AV_PIX_FMT_YUV422P, C.AV_PIX_FMT_YUVJ422P:
		return true
	}
	return false
}

// NewSwsContext creates a scaler from srcW x srcH srcFmt to dstW x dstH dstFmt. flags is
// the interpolation; SWS_BITEXACT | SWS_ACCURATE_RND are always added. Same-size 8-bit
// 4:2:0 and 4:2:2 to RGB24 runs the portable default conversion instead (PortableConversion).
func NewSwsContext(srcW, srcH int, srcFmt PixelFormat, dstW, dstH int, dstFmt PixelFormat, flags ScaleFlags) (*SwsContext, error) {
	if srcW <= 0 || srcH <= 0 || dstW <= 0 || dstH <= 0 {
		return nil, fmt.Errorf("ffmpeg: scaler %dx%d -> %dx%d: %w", srcW, srcH, dstW, dstH, ErrInvalidArg)
	}
	s := &SwsContext{open: true, srcW: srcW, srcH: srcH, srcFmt: srcFmt, dstW: dstW, dstH: dstH, dstFmt: dstFmt, flags: flags, colorspace: -1, fullRange: -1}
	if PortableConversion(srcW, srcH, srcFmt, dstW, dstH, dstFmt, flags) {
		return s, nil
	}
	s.c = C.sws_getContext(C.int(srcW), C.int(srcH), int32(srcFmt), C.int(dstW), C.int(dstH), int32(dstFmt),
		C.int(flags|scaleExact), nil, nil, nil)
	if s.c == nil {
		return nil, fmt.Errorf("ffmpeg: scaler %s %dx%d -> %s %dx%d: %w", srcFmt, srcW, srcH, dstFmt, dstW, dstH, ErrNotSupported)
	}
	return s, nil
}

// Free releases the scaler. Safe to call more than once.
func (s *SwsContext) Free() {
	if s.c != nil {
		C.sws_freeContext(s.c)
		s.c = nil
	}
	s.open = false
}

// Matches reports whether s converts frames of this geometry and format to this geometry
// and format with these flags, i.e. whether it can be reused.
func (s *SwsContext) Matches(srcW, srcH int, srcFmt PixelFormat, dstW, dstH int, dstFmt PixelFormat, flags ScaleFlags) bool {
	return s.open && s.srcW == srcW && s.srcH == srcH && s.srcFmt == srcFmt &&
		s.dstW == dstW && s.dstH == dstH && s.dstFmt == dstFmt && s.flags == flags
}

// jpegRange reports the "J" formats, full range by definition (swscale's handle_jpeg).
func jpegRange(pf PixelFormat) bool {
	switch pf {
	case C.AV_PIX_FMT_YUVJ420P, C.AV_PIX_FMT_YUVJ422P, C.AV_PIX_FMT_YUVJ444P, C.AV_PIX_FMT_YUVJ440P, C.AV_PIX_FMT_YUVJ411P:
		return true
	}
	return false
}

// ScaleFrame converts src into dst, whose geometry and format must match the scaler's.
// The YUV matrix and range are taken from the frame, as the ffmpeg CLI's (and decord's)
// scale filter does with its defaults: the frame's matrix (RGB, YCgCo and unknown ones as
// BT.601), the frame's range, or for an unspecified range the format's (full for yuvj*).
func (s *SwsContext) ScaleFrame(src *Frame, dst *Image) error {
	if !s.open || src.c == nil || dst.c == nil {
		return ErrClosed
	}
	if src.Width() != s.srcW || src.Height() != s.srcH || src.PixFmt() != s.srcFmt ||
		dst.w != s.dstW || dst.h != s.dstH || dst.fmt != s.dstFmt {
		return fmt.Errorf("ffmpeg: scale %s %dx%d into %s %dx%d with a %s %dx%d -> %s %dx%d scaler: %w",
			src.PixFmt(), src.Width(), src.Height(), dst.fmt, dst.w, dst.h,
			s.srcFmt, s.srcW, s.srcH, s.dstFmt, s.dstW, s.dstH, ErrInvalidArg)
	}
	cs, fr := src.Colorspace(), 0
	if r := src.c.color_range; r == C.AVCOL_RANGE_JPEG || (r == C.AVCOL_RANGE_UNSPECIFIED && jpegRange(s.srcFmt)) {
		fr = 1
	}
	if cs != s.colorspace || fr != s.fullRange {
		if s.c != nil {
			C.nt_sws_colorspace(s.c, C.int(cs), C.int(fr))
		} else {
			s.coef = C.nt_yuv2rgb_init(C.int(cs), C.int(fr))
		}
		s.colorspace, s.fullRange = cs, fr
	}
	var ret C.int
	if s.c == nil {
		ret = C.nt_yuv2rgb24(src.c, dst.c, C.int(dst.stride), s.coef)
	} else {
		ret = C.nt_sws_frame(s.c, src.c, dst.c, C.int(dst.stride))
	}
	if ret < 0 {
		return Error(ret)
	}
	return nil
}

// Image is a packed picture (RGB24, RGBA, GRAY8) in C memory, the destination of a scaler.
// Rows are padded to 64 bytes for SIMD; Copy packs them.
type Image struct {
	c      *C.uint8_t
	w, h   int
	stride int
	bpp    int
	fmt    PixelFormat
}

// NewImage allocates a w x h picture of a packed format.
func NewImage(w, h int, pf PixelFormat) (*Image, error) {
	bpp := 0
	switch pf {
	case PixFmtRGB24:
		bpp = 3
	case PixFmtRGBA:
		bpp = 4
	case PixFmtGray8:
		bpp = 1
	default:
		return nil, fmt.Errorf("ffmpeg: image format %s: %w", pf, ErrNotSupported)
	}
	if w <= 0 || h <= 0 || int64(w)*int64(h) > 1<<28 {
		return nil, fmt.Errorf("ffmpeg: image %dx%d: %w", w, h, ErrRange)
	}
	stride := (w*bpp + 63) &^ 63
	// One spare row: some swscale SIMD paths write a little past the last row's end.
	p := C.av_malloc(C.size_t(stride * (h + 1)))
	if p == nil {
		return nil, ErrNoMem
	}
	return &Image{c: (*C.uint8_t)(p), w: w, h: h, stride: stride, bpp: bpp, fmt: pf}, nil
}

// Free releases the picture. Safe to call more than once.
func (m *Image) Free() {
	if m.c != nil {
		C.av_free(unsafe.Pointer(m.c))
		m.c = nil
	}
}

// Width in pixels.
func (m *Image) Width() int { return m.w }

// Height in pixels.
func (m *Image) Height() int { return m.h }

// Format is the pixel format.
func (m *Image) Format() PixelFormat { return m.fmt }

// Len is the size of the packed picture: Width*Height*bytes per pixel.
func (m *Image) Len() int { return m.w * m.h * m.bpp }

// Copy packs the picture into dst (len(dst) >= Len()) and returns Len().
func (m *Image) Copy(dst []byte) int {
	row := m.w * m.bpp
	n := row * m.h
	if m.c == nil || len(dst) < n {
		return 0
	}
	src := unsafe.Slice((*byte)(unsafe.Pointer(m.c)), m.stride*m.h)
	if row == m.stride {
		return copy(dst, src[:n])
	}
	for y := 0; y < m.h; y++ {
		copy(dst[y*row:(y+1)*row], src[y*m.stride:y*m.stride+row])
	}
	return n
}

// newFilledFrame allocates a w x h frame of format pf with colorspace and color range set and
// every plane's bytes from fill (for the tests: frames of any content without a decoder).
func newFilledFrame(w, h int, pf PixelFormat, colorspace, colorRange int, fill func(plane int, b []byte)) (*Frame, error) {
	f, err := NewFrame()
	if err != nil {
		return nil, err
	}
	f.c.format, f.c.width, f.c.height = C.int(pf), C.int(w), C.int(h)
	f.c.colorspace, f.c.color_range = uint32(colorspace), uint32(colorRange)
	if ret := C.av_frame_get_buffer(f.c, 0); ret < 0 {
		f.Free()
		return nil, Error(ret)
	}
	d := C.av_pix_fmt_desc_get(int32(pf))
	for p := 0; p < 4 && f.c.data[p] != nil; p++ {
		ph := h
		if p == 1 || p == 2 {
			ph = (h + 1<<d.log2_chroma_h - 1) >> d.log2_chroma_h
		}
		fill(p, unsafe.Slice((*byte)(unsafe.Pointer(f.c.data[p])), int(f.c.linesize[p])*ph))
	}
	return f, nil
}

// defaultSwscale converts src to packed RGB24 of the same size with libswscale's default
// behaviour, as the ffmpeg CLI's scale filter runs it: flags SWS_BICUBIC alone (so on x86
// the MMX/SSSE3 special converter where one applies) and the frame's matrix and range. For
// the tests of the portable conversion. The rows it writes into are long enough for the
// special converter's blocks of 8 columns: with a row shorter than the width rounded up to
// 8 (w*3 rounded up to the buffer's alignment), the converter skips the last block, and its
// columns keep what the buffer held.
func defaultSwscale(src *Frame) ([]byte, error) {
	w, h := src.Width(), src.Height()
	img, err := NewImage((w+15)&^15, h, PixFmtRGB24)
	if err != nil {
		return nil, err
	}
	defer img.Free()
	c := C.sws_getContext(C.int(w), C.int(h), int32(src.c.format), C.int(w), C.int(h), C.AV_PIX_FMT_RGB24,
		C.SWS_BICUBIC, nil, nil, nil)
	if c == nil {
		return nil, ErrNotSupported
	}
	defer C.sws_freeContext(c)
	fr := 0
	if r := src.c.color_range; r == C.AVCOL_RANGE_JPEG || (r == C.AVCOL_RANGE_UNSPECIFIED && jpegRange(src.PixFmt())) {
		fr = 1
	}
	C.nt_sws_colorspace(c, C.int(src.Colorspace()), C.int(fr))
	if ret := C.nt_sws_frame(c, src.c, img.c, C.int(img.stride)); ret < 0 {
		return nil, Error(ret)
	}
	all := unsafe.Slice((*byte)(unsafe.Pointer(img.c)), img.stride*h)
	out := make([]byte, 0, w*h*3)
	for y := 0; y < h; y++ {
		out = append(out, all[y*img.stride:y*img.stride+w*3]...)
	}
	return out, nil
}
