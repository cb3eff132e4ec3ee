package image

import (
	"bytes"
	"errors"
	"fmt"
	goimage "image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/webp"
)

// JPEGRegion selects what a JPEGDecoder decodes: the picture scaled by 1/Denom in the DCT
// domain (0 or 1: full size; 2, 4, 8) and, when X1 > 0, only the rectangle [X0, X1) x
// [Y0, Y1) of the scaled picture (a decoder may start left of X0).
type JPEGRegion struct {
	Denom          int
	X0, Y0, X1, Y1 int
}

// Whole reports whether r asks for the whole picture at full size.
func (r JPEGRegion) Whole() bool { return r.Denom <= 1 && r.X1 == 0 }

// JPEGDecoder decodes 8-bit JPEG. It is the only JPEG decoder DecodePlanar and Decode use
// (xformgraph sets the libjpeg-turbo one): no other decoder stands in, since it would give
// other pixels.
type JPEGDecoder interface {
	// DecodeJPEG decodes a YCbCr/RGB or gray JPEG to planes: Planar.RGB with R, G, B
	// planes, or one luma plane when gray is true (or the JPEG is gray), holding region r
	// (Planar.OffX/OffY/FullWidth/FullHeight say where it lies in the scaled picture).
	DecodeJPEG(data []byte, gray bool, r JPEGRegion, maxPixels int64) (*Planar, error)
	// DecodeJPEGCMYK decodes a CMYK or YCCK JPEG to C, M, Y, K samples, 0 meaning no ink
	// (image/jpeg's image.CMYK convention; Adobe's inverted samples are flipped).
	DecodeJPEGCMYK(data []byte, maxPixels int64) (*goimage.CMYK, error)
}

// ErrDecoder is wrapped when a decoder cannot be set up (not the input's fault). No other
// decoder is tried instead: it would give different pixels.
var ErrDecoder = errors.New("image: decoder unavailable")

// DecodeOptions configure Decode and DecodePlanar.
type DecodeOptions struct {
	// MaxPixels rejects images whose header declares more pixels, before allocating.
	MaxPixels int64
	// Channels of the result: 1 (gray), 3 (RGB, default) or 4 (RGBA).
	Channels int
	// IgnoreOrientation keeps the stored pixel order instead of applying EXIF orientation.
	IgnoreOrientation bool
	// JPEG decodes JPEG; required for JPEG input (ErrDecoder without it).
	JPEG JPEGDecoder
	// Region lets DecodePlanar decode only part of a JPEG, or decode it scaled down: for a
	// caller that reads nothing else, such as a crop.
	Region JPEGRegion
}

// ProbeLimited probes and applies the pixel limit.
func ProbeLimited(data []byte, maxPixels int64) (Info, error) {
	info, err := Probe(data)
	if err != nil {
		return info, err
	}
	if maxPixels > 0 && int64(info.Width)*int64(info.Height) > maxPixels {
		return info, fmt.Errorf("%w: %s %dx%d exceeds %d pixels", ErrTooLarge, info.Format, info.Width, info.Height, maxPixels)
	}
	return info, nil
}

// DecodePlanar decodes a colour or gray 8-bit JPEG to planes (opt.Region of it) without
// applying orientation (info.Orientation tells the caller). ok is false when the image has
// no planar form (PNG, WebP, CMYK JPEG): use Decode.
func DecodePlanar(data []byte, opt DecodeOptions) (p *Planar, info Info, ok bool, err error) {
	info, err = ProbeLimited(data, opt.MaxPixels)
	if err != nil {
		return nil, info, false, err
	}
	if info.Format != FormatJPEG || info.Components == 4 {
		return nil, info, false, nil
	}
	if info.Precision != 8 {
		return nil, info, false, fmt.Errorf("%w: %d-bit JPEG", ErrUnsupported, info.Precision)
	}
	if opt.JPEG == nil {
		return nil, info, false, fmt.Errorf("%w: no JPEG decoder", ErrDecoder)
	}
	p, err = opt.JPEG.DecodeJPEG(data, opt.Channels == 1 || info.Components == 1, opt.Region, opt.MaxPixels)
	if err != nil {
		return nil, info, false, err
	}
	if opt.Region.Whole() && (p.Width != info.Width || p.Height != info.Height) {
		return nil, info, false, fmt.Errorf("%w: header says %dx%d, decoded %dx%d", ErrFormat, info.Width, info.Height, p.Width, p.Height)
	}
	return p, info, true, nil
}

func planarFromYCbCr(m *goimage.YCbCr, full bool) *Planar {
	p := &Planar{Width: m.Rect.Dx(), Height: m.Rect.Dy(), Y: m.Y, Cb: m.Cb, Cr: m.Cr,
		YStride: m.YStride, CStride: m.CStride, FullRange: full}
	switch m.SubsampleRatio {
	case goimage.YCbCrSubsampleRatio420:
		p.Log2ChromaW, p.Log2ChromaH = 1, 1
	case goimage.YCbCrSubsampleRatio422:
		p.Log2ChromaW = 1
	case goimage.YCbCrSubsampleRatio440:
		p.Log2ChromaH = 1
	case goimage.YCbCrSubsampleRatio411:
		p.Log2ChromaW = 2
	case goimage.YCbCrSubsampleRatio410:
		p.Log2ChromaW, p.Log2ChromaH = 2, 1
	}
	return p
}

func mapGoErr(err error) error {
	var fe jpeg.FormatError
	var ue jpeg.UnsupportedError
	var pfe png.FormatError
	var pue png.UnsupportedError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("%w: %v", ErrTruncated, err)
	case errors.As(err, &ue) || errors.As(err, &pue):
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	case errors.As(err, &fe) || errors.As(err, &pfe):
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return fmt.Errorf("%w: %v", ErrFormat, err)
}

// Decode decodes data to an interleaved image with opt.Channels channels, applying EXIF
// orientation unless told not to.
func Decode(data []byte, opt DecodeOptions) (*Image, error) {
	ch := opt.Channels
	if ch == 0 {
		ch = 3
	}
	if ch != 1 && ch != 3 && ch != 4 {
		return nil, fmt.Errorf("%w: %d channels", ErrUnsupported, ch)
	}
	opt.Region = JPEGRegion{}
	p, info, ok, err := DecodePlanar(data, opt)
	if err != nil {
		return nil, err
	}
	var out *Image
	if ok {
		out = p.ToImage(ch)
	} else {
		var m goimage.Image
		switch info.Format {
		case FormatJPEG: // CMYK or YCCK
			if opt.JPEG == nil {
				return nil, fmt.Errorf("%w: no JPEG decoder", ErrDecoder)
			}
			m, err = opt.JPEG.DecodeJPEGCMYK(data, opt.MaxPixels)
			if err != nil {
				return nil, err
			}
		case FormatPNG:
			m, err = png.Decode(bytes.NewReader(data))
		case FormatWebP:
			m, err = webp.Decode(bytes.NewReader(data))
		}
		if err != nil {
			return nil, mapGoErr(err)
		}
		if b := m.Bounds(); b.Dx() != info.Width || b.Dy() != info.Height {
			return nil, fmt.Errorf("%w: header says %dx%d, decoded %dx%d", ErrFormat, info.Width, info.Height, b.Dx(), b.Dy())
		}
		out = fromGo(m, ch)
	}
	if !opt.IgnoreOrientation && info.Orientation > 1 {
		out = Orient(out, info.Orientation)
	}
	return out, nil
}

// fromGo converts a decoded Go image as Pillow's convert("RGB"/"L"/"RGBA") would: alpha
// dropped (not composited), 16-bit samples truncated to their high byte, CMYK by
// (255-C)(255-K)/255, gray by ITU-R 601-2 luma (L = R*299/1000 + G*587/1000 + B*114/1000).
func fromGo(m goimage.Image, ch int) *Image {
	b := m.Bounds()
	out := NewImage(b.Dx(), b.Dy(), ch)
	put := func(x, y int, r, g, bl, a uint8) {
		o := y*out.Stride + x*ch
		switch ch {
		case 1:
			out.Pix[o] = uint8((uint32(r)*19595 + uint32(g)*38470 + uint32(bl)*7471 + 0x8000) >> 16)
		case 3:
			out.Pix[o], out.Pix[o+1], out.Pix[o+2] = r, g, bl
		case 4:
			out.Pix[o], out.Pix[o+1], out.Pix[o+2], out.Pix[o+3] = r, g, bl, a
		}
	}
	switch m := m.(type) {
	case *goimage.YCbCr:
		return planarFromYCbCr(m, false).ToImage(ch) // WebP lossy: limited range
	case *goimage.NYCbCrA:
		rgb := planarFromYCbCr(&m.YCbCr, false).ToImage(3)
		for y := 0; y < out.Height; y++ {
			for x := 0; x < out.Width; x++ {
				o := y*rgb.Stride + x*3
				put(x, y, rgb.Pix[o], rgb.Pix[o+1], rgb.Pix[o+2], m.A[(y)*m.AStride+x])
			}
		}
		return out
	case *goimage.NRGBA:
		for y := 0; y < out.Height; y++ {
			row := m.Pix[y*m.Stride:]
			for x := 0; x < out.Width; x++ {
				put(x, y, row[4*x], row[4*x+1], row[4*x+2], row[4*x+3])
			}
		}
		return out
	case *goimage.RGBA:
		// Opaque images only come out as RGBA from image/png, so premultiplication is a no-op.
		for y := 0; y < out.Height; y++ {
			row := m.Pix[y*m.Stride:]
			for x := 0; x < out.Width; x++ {
				put(x, y, row[4*x], row[4*x+1], row[4*x+2], row[4*x+3])
			}
		}
		return out
	case *goimage.Gray:
		for y := 0; y < out.Height; y++ {
			for x := 0; x < out.Width; x++ {
				v := m.Pix[y*m.Stride+x]
				put(x, y, v, v, v, 255)
			}
		}
		return out
	case *goimage.Gray16:
		for y := 0; y < out.Height; y++ {
			for x := 0; x < out.Width; x++ {
				v := m.Pix[y*m.Stride+2*x]
				put(x, y, v, v, v, 255)
			}
		}
		return out
	case *goimage.NRGBA64:
		for y := 0; y < out.Height; y++ {
			row := m.Pix[y*m.Stride:]
			for x := 0; x < out.Width; x++ {
				put(x, y, row[8*x], row[8*x+2], row[8*x+4], row[8*x+6])
			}
		}
		return out
	case *goimage.RGBA64:
		for y := 0; y < out.Height; y++ {
			row := m.Pix[y*m.Stride:]
			for x := 0; x < out.Width; x++ {
				put(x, y, row[8*x], row[8*x+2], row[8*x+4], row[8*x+6])
			}
		}
		return out
	case *goimage.CMYK:
		for y := 0; y < out.Height; y++ {
			row := m.Pix[y*m.Stride:]
			for x := 0; x < out.Width; x++ {
				c, mm, yy, k := uint32(row[4*x]), uint32(row[4*x+1]), uint32(row[4*x+2]), uint32(row[4*x+3])
				nk := 255 - k
				f := func(v uint32) uint8 { t := v*nk + 128; return uint8(nk - (t+t>>8)>>8) }
				put(x, y, f(c), f(mm), f(yy), 255)
			}
		}
		return out
	}
	for y := 0; y < out.Height; y++ {
		for x := 0; x < out.Width; x++ {
			c := color.NRGBAModel.Convert(m.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
			put(x, y, c.R, c.G, c.B, c.A)
		}
	}
	return out
}
