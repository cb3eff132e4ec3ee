package image

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Sentinel errors; xformgraph maps them onto its own (ErrDecode, ErrUnsupported, ErrLimit).
var (
	ErrFormat      = errors.New("image: unknown or corrupt format")
	ErrTruncated   = errors.New("image: truncated data")
	ErrUnsupported = errors.New("image: unsupported image feature")
	ErrTooLarge    = errors.New("image: too many pixels")
)

// Format of an encoded image.
type Format uint8

const (
	FormatUnknown Format = iota
	FormatJPEG
	FormatPNG
	FormatWebP
)

func (f Format) String() string {
	return [...]string{"unknown", "jpeg", "png", "webp"}[f]
}

// Info is what the header says, read without decoding pixels.
type Info struct {
	Format        Format
	Width, Height int
	Components    int  // JPEG: 1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK; PNG/WebP: 0
	Progressive   bool // JPEG
	Precision     int  // JPEG sample bits (8 or 12)
	// Orientation is the EXIF orientation (1..8, 1 = as stored).
	Orientation int
}

// Probe reads the header of data. It never allocates proportionally to the image size, so
// the caller can apply a pixel limit before decoding.
func Probe(data []byte) (Info, error) {
	switch {
	case len(data) == 0:
		return Info{}, fmt.Errorf("%w: empty input", ErrFormat)
	case len(data) >= 2 && data[0] == 0xff && data[1] == 0xd8:
		return probeJPEG(data)
	case len(data) >= 8 && bytes.Equal(data[:8], []byte("\x89PNG\r\n\x1a\n")):
		return probePNG(data)
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return probeWebP(data)
	}
	return Info{}, fmt.Errorf("%w: no JPEG, PNG or WebP signature", ErrFormat)
}

func probeJPEG(d []byte) (Info, error) {
	info := Info{Format: FormatJPEG, Orientation: 1}
	i := 2
	for {
		// Skip fill bytes and find the next marker.
		for i < len(d) && d[i] != 0xff {
			i++
		}
		for i < len(d) && d[i] == 0xff {
			i++
		}
		if i >= len(d) {
			return info, fmt.Errorf("%w: no SOF marker", ErrTruncated)
		}
		m := d[i]
		i++
		if m == 0xd8 || (m >= 0xd0 && m <= 0xd7) || m == 0x01 {
			continue
		}
		if m == 0xd9 || m == 0xda {
			return info, fmt.Errorf("%w: JPEG without frame header", ErrFormat)
		}
		if i+2 > len(d) {
			return info, fmt.Errorf("%w: JPEG marker length", ErrTruncated)
		}
		n := int(binary.BigEndian.Uint16(d[i:]))
		if n < 2 || i+n > len(d) {
			return info, fmt.Errorf("%w: JPEG segment %#x of %d bytes", ErrTruncated, m, n)
		}
		seg := d[i+2 : i+n]
		switch {
		case m == 0xe1 && len(seg) > 6 && string(seg[:6]) == "Exif\x00\x00":
			info.Orientation = exifOrientation(seg[6:])
		case m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc:
			if len(seg) < 6 {
				return info, fmt.Errorf("%w: short SOF", ErrFormat)
			}
			switch m {
			case 0xc0, 0xc1:
			case 0xc2:
				info.Progressive = true
			default:
				return info, fmt.Errorf("%w: JPEG SOF%d (lossless/arithmetic/hierarchical)", ErrUnsupported, m-0xc0)
			}
			info.Precision = int(seg[0])
			info.Height = int(binary.BigEndian.Uint16(seg[1:]))
			info.Width = int(binary.BigEndian.Uint16(seg[3:]))
			info.Components = int(seg[5])
			if info.Width == 0 || info.Height == 0 {
				return info, fmt.Errorf("%w: JPEG %dx%d (DNL not supported)", ErrFormat, info.Width, info.Height)
			}
			if c := info.Components; c != 1 && c != 3 && c != 4 {
				return info, fmt.Errorf("%w: JPEG with %d components", ErrUnsupported, c)
			}
			return info, nil
		}
		i += n
	}
}

// exifOrientation reads tag 0x0112 from IFD0 of a TIFF-structured EXIF block; 1 when
// absent or malformed (a bad EXIF block never fails a decode, as in Pillow).
func exifOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	off := int(bo.Uint32(t[4:]))
	if off < 8 || off+2 > len(t) {
		return 1
	}
	n := int(bo.Uint16(t[off:]))
	for k := 0; k < n; k++ {
		e := off + 2 + 12*k
		if e+12 > len(t) {
			return 1
		}
		if bo.Uint16(t[e:]) == 0x0112 {
			v := int(bo.Uint16(t[e+8:]))
			if v >= 1 && v <= 8 {
				return v
			}
			return 1
		}
	}
	return 1
}

func probePNG(d []byte) (Info, error) {
	if len(d) < 33 {
		return Info{}, fmt.Errorf("%w: PNG header", ErrTruncated)
	}
	if string(d[12:16]) != "IHDR" {
		return Info{}, fmt.Errorf("%w: PNG without IHDR", ErrFormat)
	}
	w := binary.BigEndian.Uint32(d[16:])
	h := binary.BigEndian.Uint32(d[20:])
	if w == 0 || h == 0 || w > 1<<30 || h > 1<<30 {
		return Info{}, fmt.Errorf("%w: PNG %dx%d", ErrFormat, w, h)
	}
	info := Info{Format: FormatPNG, Width: int(w), Height: int(h), Orientation: 1}
	// eXIf chunk (PNG 1.5) carries orientation too; Pillow honours it via exif_transpose
	// only on request, and so do we: PNG orientation is ignored.
	return info, nil
}

func probeWebP(d []byte) (Info, error) {
	if len(d) < 30 {
		return Info{}, fmt.Errorf("%w: WebP header", ErrTruncated)
	}
	info := Info{Format: FormatWebP, Orientation: 1}
	c := d[12:]
	switch string(c[:4]) {
	case "VP8 ":
		if c[11] != 0x9d || c[12] != 0x01 || c[13] != 0x2a {
			return info, fmt.Errorf("%w: VP8 start code", ErrFormat)
		}
		info.Width = int(binary.LittleEndian.Uint16(c[14:]) & 0x3fff)
		info.Height = int(binary.LittleEndian.Uint16(c[16:]) & 0x3fff)
	case "VP8L":
		if c[8] != 0x2f {
			return info, fmt.Errorf("%w: VP8L signature", ErrFormat)
		}
		b := binary.LittleEndian.Uint32(c[9:])
		info.Width = int(b&0x3fff) + 1
		info.Height = int(b>>14&0x3fff) + 1
	case "VP8X":
		info.Width = int(uint32(c[12])|uint32(c[13])<<8|uint32(c[14])<<16) + 1
		info.Height = int(uint32(c[15])|uint32(c[16])<<8|uint32(c[17])<<16) + 1
		if c[8]&0x02 != 0 {
			return info, fmt.Errorf("%w: animated WebP", ErrUnsupported)
		}
	default:
		return info, fmt.Errorf("%w: WebP chunk %q", ErrFormat, c[:4])
	}
	if info.Width == 0 || info.Height == 0 {
		return info, fmt.Errorf("%w: WebP %dx%d", ErrFormat, info.Width, info.Height)
	}
	return info, nil
}
