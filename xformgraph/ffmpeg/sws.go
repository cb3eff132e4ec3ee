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
	// ScaleAccurateRound is always on (see NewSwsContext); ScaleFullChroma trades speed
	// for chroma detail; OR it in.
	ScaleAccurateRound ScaleFlags = C.SWS_ACCURATE_RND
	ScaleFullChroma    ScaleFlags = C.SWS_FULL_CHR_H_INT
)

// SwsContext converts and resizes pictures (libswscale) from one fixed geometry and pixel
// format to another.
type SwsContext struct {
	c                     *C.struct_SwsContext
	srcW, srcH            int
	srcFmt                PixelFormat
	dstW, dstH            int
	dstFmt                PixelFormat
	colorspace, fullRange int
}

// Exactness flags every scaler gets: without them swscale picks SIMD paths (MMX/SSE/AVX2
// YUV->RGB, approximate rounding) whose output differs with the CPU, and xformgraph promises
// the same bytes on every host.
const scaleExact = C.SWS_BITEXACT | C.SWS_ACCURATE_RND

// NewSwsContext creates a scaler from srcW x srcH srcFmt to dstW x dstH dstFmt. flags is
// the interpolation; SWS_BITEXACT | SWS_ACCURATE_RND are always added.
func NewSwsContext(srcW, srcH int, srcFmt PixelFormat, dstW, dstH int, dstFmt PixelFormat, flags ScaleFlags) (*SwsContext, error) {
	if srcW <= 0 || srcH <= 0 || dstW <= 0 || dstH <= 0 {
		return nil, fmt.Errorf("ffmpeg: scaler %dx%d -> %dx%d: %w", srcW, srcH, dstW, dstH, ErrInvalidArg)
	}
	c := C.sws_getContext(C.int(srcW), C.int(srcH), int32(srcFmt), C.int(dstW), C.int(dstH), int32(dstFmt),
		C.int(flags|scaleExact), nil, nil, nil)
	if c == nil {
		return nil, fmt.Errorf("ffmpeg: scaler %s %dx%d -> %s %dx%d: %w", srcFmt, srcW, srcH, dstFmt, dstW, dstH, ErrNotSupported)
	}
	return &SwsContext{c: c, srcW: srcW, srcH: srcH, srcFmt: srcFmt, dstW: dstW, dstH: dstH, dstFmt: dstFmt, colorspace: -1, fullRange: -1}, nil
}

// Free releases the scaler. Safe to call more than once.
func (s *SwsContext) Free() {
	if s.c != nil {
		C.sws_freeContext(s.c)
		s.c = nil
	}
}

// Matches reports whether s converts frames of this geometry and format to this geometry
// and format, i.e. whether it can be reused.
func (s *SwsContext) Matches(srcW, srcH int, srcFmt PixelFormat, dstW, dstH int, dstFmt PixelFormat) bool {
	return s.c != nil && s.srcW == srcW && s.srcH == srcH && s.srcFmt == srcFmt &&
		s.dstW == dstW && s.dstH == dstH && s.dstFmt == dstFmt
}

// ScaleFrame converts src into dst, whose geometry and format must match the scaler's.
// The YUV matrix and range are taken from the frame, as the ffmpeg CLI's scale filter does.
func (s *SwsContext) ScaleFrame(src *Frame, dst *Image) error {
	if s.c == nil || src.c == nil || dst.c == nil {
		return ErrClosed
	}
	if src.Width() != s.srcW || src.Height() != s.srcH || src.PixFmt() != s.srcFmt ||
		dst.w != s.dstW || dst.h != s.dstH || dst.fmt != s.dstFmt {
		return fmt.Errorf("ffmpeg: scale %s %dx%d into %s %dx%d with a %s %dx%d -> %s %dx%d scaler: %w",
			src.PixFmt(), src.Width(), src.Height(), dst.fmt, dst.w, dst.h,
			s.srcFmt, s.srcW, s.srcH, s.dstFmt, s.dstW, s.dstH, ErrInvalidArg)
	}
	cs, fr := src.Colorspace(), 0
	if src.FullRange() {
		fr = 1
	}
	if cs != s.colorspace || fr != s.fullRange {
		C.nt_sws_colorspace(s.c, C.int(cs), C.int(fr))
		s.colorspace, s.fullRange = cs, fr
	}
	ret := C.nt_sws_frame(s.c, src.c, dst.c, C.int(dst.stride))
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
