// Package jpegturbo decodes JPEG with libjpeg-turbo (the system's libjpeg62-turbo), only
// the part of the picture a caller needs: the columns of a region (jpeg_crop_scanline),
// none of the rows above it (jpeg_skip_scanlines, which still entropy-decodes them but
// runs no IDCT, upsampling or colour conversion) and none below it (the decode stops), at
// 1/1, 1/2, 1/4 or 1/8 scale (DCT-domain scaling). It is xformgraph's only JPEG decoder.
//
// Pixels are libjpeg-turbo's with its default (accurate integer) IDCT, fancy upsampling
// and JFIF YCbCr->RGB conversion, as Pillow decodes. A region's pixels equal the same
// pixels of a full decode except in the one or two columns at a region edge that is not a
// picture edge, where fancy chroma upsampling sees no neighbour (callers ask for a margin).
// libjpeg-turbo's SIMD code is bit-exact with its C code, so the bytes do not depend on the
// CPU (tested by xformgraph/golden).
//
// Any data error libjpeg-turbo would conceal (it emits a warning and fills in gray) fails
// the decode instead: a damaged region the caller reads is never silently other pixels.
// Damage outside the decoded rows is not seen.
package jpegturbo

// #cgo pkg-config: libjpeg
// #include <stdio.h>
// #include <stdlib.h>
// #include <jpeglib.h>
// #include <jerror.h>
// #include "helpers.h"
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Errors, wrapped with libjpeg-turbo's message.
var (
	ErrFormat      = errors.New("jpegturbo: corrupt JPEG")
	ErrTruncated   = errors.New("jpegturbo: truncated JPEG")
	ErrUnsupported = errors.New("jpegturbo: unsupported JPEG")
	ErrLimit       = errors.New("jpegturbo: picture exceeds the pixel limit")
	ErrArg         = errors.New("jpegturbo: invalid request")
	// ErrConcealed: libjpeg-turbo met corrupt data in the rows decoded and would have
	// concealed it (also wraps ErrFormat).
	ErrConcealed = fmt.Errorf("%w: concealed decode error", ErrFormat)
)

// Out is the output colour model.
type Out int

// Outputs.
const (
	RGB  Out = C.NT_JPEG_OUT_RGB  // three planes R, G, B
	Gray Out = C.NT_JPEG_OUT_GRAY // one plane (luma of a colour JPEG)
	CMYK Out = C.NT_JPEG_OUT_CMYK // one interleaved plane, C M Y K as stored (Adobe files inverted)
)

func init() {
	C.nt_jpeg_deinterleave_simd() // pick the RGB deinterleave before any goroutine decodes
}

// Version is libjpeg-turbo's version, "2.1.5" (LIBJPEG_TURBO_VERSION_NUMBER of the build;
// Debian ships the library and headers in lockstep).
func Version() string {
	v := int(C.nt_jpeg_version())
	return fmt.Sprintf("%d.%d.%d", v/1000000, v/1000%1000, v%1000)
}

// Request says what to decode.
type Request struct {
	Out Out
	// Denom scales the picture by 1/Denom in the DCT domain: 1 (default), 2, 4 or 8. The
	// scaled picture is ceil(W/Denom) x ceil(H/Denom).
	Denom int
	// Region of the scaled picture to decode, [X0, X1) x [Y0, Y1); X1 == 0 means all.
	X0, Y0, X1, Y1 int
	// MaxPixels rejects a picture whose header declares more pixels (0: no limit).
	MaxPixels int64
}

// Result is a decoded region.
type Result struct {
	// Width, Height are the picture's; ScaledW, ScaledH the scaled picture's.
	Width, Height, ScaledW, ScaledH int
	// Components and ColorSpace (J_COLOR_SPACE) from the header; Adobe: an APP14 marker.
	Components, ColorSpace int
	Adobe                  bool
	// X0, Y0, W, H is the region decoded, in the scaled picture: X0 may be left of the
	// requested X0 (rounded down to an iMCU column), the rest as requested.
	X0, Y0, W, H int
	// Planes: R, G, B (W x H each, stride W), or one gray plane, or one CMYK plane
	// (stride 4W).
	Planes [][]byte
	// Buf is the memory the planes are in (the buf passed to Decode, or a new one).
	Buf []byte
}

// ScaledSize is the size of a W x H picture scaled by 1/denom.
func ScaledSize(w, h, denom int) (int, int) {
	if denom <= 1 {
		return w, h
	}
	return (w + denom - 1) / denom, (h + denom - 1) / denom
}

// maxAlign bounds how far left of the requested X0 the region may start: an iMCU column
// is at most 8 * 4 (h sampling factor) pixels wide.
const maxAlign = 32

// Decode decodes r from data. buf, if not nil, provides the plane memory (it is grown as
// needed and returned through Result.Planes, so a caller can recycle it).
func Decode(data []byte, r Request, buf []byte) (*Result, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty input", ErrTruncated)
	}
	switch r.Denom {
	case 0:
		r.Denom = 1
	case 1, 2, 4, 8:
	default:
		return nil, fmt.Errorf("%w: scale 1/%d", ErrArg, r.Denom)
	}
	// Plane capacity: the region, or the whole scaled picture. The size comes from the SOF
	// marker (libjpeg-turbo rechecks everything against its own parse).
	iw, ih, err := sofSize(data)
	if err != nil {
		return nil, err
	}
	if r.MaxPixels > 0 && int64(iw)*int64(ih) > r.MaxPixels {
		return nil, fmt.Errorf("%w: %dx%d exceeds %d pixels", ErrLimit, iw, ih, r.MaxPixels)
	}
	w, h := ScaledSize(iw, ih, r.Denom)
	if r.X1 > 0 {
		if r.X0 < 0 || r.Y0 < 0 || r.X1 > w || r.Y1 > h || r.X0 >= r.X1 || r.Y0 >= r.Y1 {
			return nil, fmt.Errorf("%w: region (%d,%d)-(%d,%d) outside %dx%d", ErrArg, r.X0, r.Y0, r.X1, r.Y1, w, h)
		}
		w, h = min(r.X1-r.X0+maxAlign, w), r.Y1-r.Y0
	}
	per := w * h
	if r.Out == CMYK {
		per *= 4
	}
	n := per
	if r.Out == RGB {
		n = 3 * per
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	p0 := &buf[0]
	p1, p2 := p0, p0
	if r.Out == RGB {
		p1, p2 = &buf[per], &buf[2*per]
	}
	rq := C.nt_jpeg_request{out: C.int(r.Out), denom: C.int(r.Denom), x0: C.int(r.X0), y0: C.int(r.Y0),
		x1: C.int(r.X1), y1: C.int(r.Y1), max_pixels: C.longlong(r.MaxPixels)}
	var res C.nt_jpeg_result
	C.nt_jpeg_decode((*C.uchar)(unsafe.Pointer(&data[0])), C.ulong(len(data)), &rq,
		(*C.uchar)(unsafe.Pointer(p0)), (*C.uchar)(unsafe.Pointer(p1)), (*C.uchar)(unsafe.Pointer(p2)), C.long(per), &res)
	msg := C.GoString(&res.msg[0])
	switch res.err {
	case C.NT_JPEG_OK:
	case C.NT_JPEG_ETRUNCATED:
		return nil, fmt.Errorf("%w: %s", ErrTruncated, msg)
	case C.NT_JPEG_EUNSUPPORTED:
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, msg)
	case C.NT_JPEG_ELIMIT:
		return nil, fmt.Errorf("%w: %s", ErrLimit, msg)
	case C.NT_JPEG_ENOMEM:
		return nil, fmt.Errorf("jpegturbo: out of memory: %s", msg)
	case C.NT_JPEG_EARG:
		return nil, fmt.Errorf("%w: %s", ErrArg, msg)
	default:
		return nil, fmt.Errorf("%w: %s", ErrFormat, msg)
	}
	if res.warnings > 0 {
		if res.warn_code == jwrnJPEGEOF {
			return nil, fmt.Errorf("%w: %w: %s", ErrTruncated, ErrConcealed, msg)
		}
		return nil, fmt.Errorf("%w: %s", ErrConcealed, msg)
	}
	out := &Result{
		Width: int(res.width), Height: int(res.height), ScaledW: int(res.scaled_width), ScaledH: int(res.scaled_height),
		Components: int(res.components), ColorSpace: int(res.color_space), Adobe: res.adobe != 0,
		X0: int(res.x0), Y0: int(res.y0), W: int(res.w), H: int(res.h), Buf: buf,
	}
	rw := out.W * out.H
	switch r.Out {
	case RGB:
		out.Planes = [][]byte{buf[:rw:rw], buf[per : per+rw : per+rw], buf[2*per : 2*per+rw : 2*per+rw]}
	case Gray:
		out.Planes = [][]byte{buf[:rw:rw]}
	case CMYK:
		out.Planes = [][]byte{buf[: 4*rw : 4*rw]}
	}
	return out, nil
}

// jwrnJPEGEOF is libjpeg's JWRN_JPEG_EOF message code ("Premature end of JPEG file").
var jwrnJPEGEOF = C.int(C.JWRN_JPEG_EOF)

// sofSize reads the picture size from the first SOF marker (for sizing buffers only).
func sofSize(b []byte) (w, h int, err error) {
	if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
		return 0, 0, fmt.Errorf("%w: no SOI marker", ErrFormat)
	}
	i := 2
	for i+4 <= len(b) {
		if b[i] != 0xFF {
			return 0, 0, fmt.Errorf("%w: no marker at offset %d", ErrFormat, i)
		}
		m := b[i+1]
		if m == 0xFF {
			i++
			continue
		}
		n := int(b[i+2])<<8 | int(b[i+3])
		if m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC {
			if i+9 > len(b) {
				break
			}
			h, w = int(b[i+5])<<8|int(b[i+6]), int(b[i+7])<<8|int(b[i+8])
			if w == 0 || h == 0 {
				return 0, 0, fmt.Errorf("%w: SOF size %dx%d", ErrFormat, w, h)
			}
			return w, h, nil
		}
		if m == 0xD9 || m == 0xDA {
			break
		}
		i += 2 + n
	}
	return 0, 0, fmt.Errorf("%w: no SOF marker", ErrTruncated)
}
