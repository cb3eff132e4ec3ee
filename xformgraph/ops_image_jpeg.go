package xformgraph

import (
	"errors"
	"fmt"
	goimage "image"
	"sync"

	ximage "github.com/newtricks/newtricks/xformgraph/image"
	"github.com/newtricks/newtricks/xformgraph/jpegturbo"
)

// JPEG is decoded by libjpeg-turbo (package jpegturbo), only the region a plan reads and,
// when the plan shrinks by 2x or more, scaled down in the DCT domain; everything after the
// decode stays in Go (fused resample from the R, G, B planes). It is the only JPEG decoder.

func init() {
	jpegDecoder = turboJPEG{}
}

// jpegBufs recycles plane memory between samples; the graph runner releases it when the
// sample's Run returns.
var jpegBufs = sync.Pool{New: func() any { return new([]byte) }}

type turboJPEG struct{}

// DecodeJPEG implements ximage.JPEGDecoder.
func (turboJPEG) DecodeJPEG(data []byte, gray bool, r ximage.JPEGRegion, maxPixels int64) (*ximage.Planar, error) {
	out := jpegturbo.RGB
	if gray {
		out = jpegturbo.Gray
	}
	bp := jpegBufs.Get().(*[]byte)
	res, err := jpegturbo.Decode(data, jpegturbo.Request{Out: out, Denom: r.Denom, X0: r.X0, Y0: r.Y0, X1: r.X1, Y1: r.Y1, MaxPixels: maxPixels}, *bp)
	if err != nil {
		jpegBufs.Put(bp)
		return nil, jpegErr(err)
	}
	*bp = res.Buf
	p := &ximage.Planar{Width: res.W, Height: res.H, Y: res.Planes[0], YStride: res.W, FullRange: true,
		OffX: res.X0, OffY: res.Y0, FullWidth: res.ScaledW, FullHeight: res.ScaledH, Denom: max(r.Denom, 1), Owner: bp}
	if out == jpegturbo.RGB {
		p.Cb, p.Cr, p.CStride, p.RGB = res.Planes[1], res.Planes[2], res.W, true
	}
	return p, nil
}

// DecodeJPEGCMYK implements ximage.JPEGDecoder.
func (turboJPEG) DecodeJPEGCMYK(data []byte, maxPixels int64) (*goimage.CMYK, error) {
	res, err := jpegturbo.Decode(data, jpegturbo.Request{Out: jpegturbo.CMYK, MaxPixels: maxPixels}, nil)
	if err != nil {
		return nil, jpegErr(err)
	}
	pix := res.Planes[0]
	if res.Adobe { // Adobe (Photoshop) CMYK is stored inverted
		for i, v := range pix {
			pix[i] = 255 - v
		}
	}
	return &goimage.CMYK{Pix: pix, Stride: 4 * res.W, Rect: goimage.Rect(0, 0, res.W, res.H)}, nil
}

// ReleasePlanar implements ximage.PlanarReleaser.
func (turboJPEG) ReleasePlanar(p *ximage.Planar) {
	if bp, ok := p.Owner.(*[]byte); ok {
		p.Owner, p.Y, p.Cb, p.Cr = nil, nil, nil, nil
		jpegBufs.Put(bp)
	}
}

func jpegErr(err error) error {
	switch {
	case errors.Is(err, jpegturbo.ErrLimit):
		return fmt.Errorf("%w: %w", ximage.ErrTooLarge, err)
	case errors.Is(err, jpegturbo.ErrTruncated):
		return fmt.Errorf("%w: %w", ximage.ErrTruncated, err)
	case errors.Is(err, jpegturbo.ErrUnsupported):
		return fmt.Errorf("%w: %w", ximage.ErrUnsupported, err)
	case errors.Is(err, jpegturbo.ErrFormat):
		return fmt.Errorf("%w: %w", ximage.ErrFormat, err)
	}
	return fmt.Errorf("%w: %w", ximage.ErrDecoder, err)
}
