package xformgraph

import (
	"errors"
	"fmt"
	"sync"

	"github.com/newtricks/newtricks/xformgraph/ffmpeg"
	ximage "github.com/newtricks/newtricks/xformgraph/image"
)

// JPEG decoding goes through FFmpeg's mjpeg decoder: measured on the 500x375 q90
// benchmark image, one thread, it decodes in about a third of image/jpeg's time and
// faster than libjpeg-turbo as Pillow calls it (see bench/xform). Everything after
// decode stays in Go (fused resample from the YCbCr planes).

func init() {
	jpegPlanar = &ffmpegJPEG{free: make(chan *ffmpeg.ImageDecoder, 64)}
}

// pictures recycles decoded plane buffers (Go memory) between samples; the graph runner
// releases them when the sample's Run returns.
var pictures = sync.Pool{New: func() any { return new(ffmpeg.Picture) }}

// ReleasePlanar implements ximage.PlanarReleaser.
func (f *ffmpegJPEG) ReleasePlanar(p *ximage.Planar) {
	if pic, ok := p.Owner.(*ffmpeg.Picture); ok {
		p.Owner, p.Y, p.Cb, p.Cr = nil, nil, nil, nil
		pictures.Put(pic)
	}
}

// ffmpegJPEG keeps a bounded free list of decoders (each owns C memory, so they are closed
// explicitly when the list is full rather than left to a sync.Pool).
type ffmpegJPEG struct {
	free chan *ffmpeg.ImageDecoder
}

func (f *ffmpegJPEG) get() (*ffmpeg.ImageDecoder, error) {
	select {
	case d := <-f.free:
		return d, nil
	default:
		return ffmpeg.NewImageDecoder("mjpeg", 1)
	}
}

func (f *ffmpegJPEG) put(d *ffmpeg.ImageDecoder) {
	select {
	case f.free <- d:
	default:
		d.Close()
	}
}

func (f *ffmpegJPEG) DecodePlanar(data []byte, lowres int, maxPixels int64, dst *ximage.Planar) error {
	return f.decode(data, lowres, maxPixels, 0, dst)
}

// DecodePlanarTop implements ximage.PlanarTopDecoder: a baseline JPEG is decoded down to
// the MCU row holding row rows-1 only (ffmpeg.ImageDecoder.DecodeTop), which saves the
// entropy decoding and IDCT of everything below a crop.
func (f *ffmpegJPEG) DecodePlanarTop(data []byte, maxPixels int64, rows int, dst *ximage.Planar) error {
	return f.decode(data, 0, maxPixels, rows, dst)
}

func (f *ffmpegJPEG) decode(data []byte, lowres int, maxPixels int64, rows int, dst *ximage.Planar) error {
	d, err := f.get()
	if err != nil {
		// No other decoder stands in: it would give other pixels.
		return fmt.Errorf("%w: open the mjpeg decoder: %v", ximage.ErrDecoder, err)
	}
	pic := pictures.Get().(*ffmpeg.Picture)
	err = d.DecodeTop(data, lowres, maxPixels, rows, pic)
	f.put(d)
	if err != nil {
		pictures.Put(pic)
		switch {
		case errors.Is(err, ffmpeg.ErrLimit):
			return fmt.Errorf("%w: %v", ximage.ErrTooLarge, err)
		case errors.Is(err, ffmpeg.ErrPatchWelcome), errors.Is(err, ffmpeg.ErrNotSupported):
			return fmt.Errorf("%w: %v", ximage.ErrUnsupported, err)
		}
		return fmt.Errorf("%w: %v", ximage.ErrFormat, err)
	}
	p := ximage.Planar{Width: pic.Width, Height: pic.Height, Y: pic.Planes[0], YStride: pic.Strides[0], FullRange: true, Owner: pic}
	switch pic.PixFmt.String() {
	case "gray":
	case "yuvj420p", "yuvj422p", "yuvj444p", "yuvj440p", "yuvj411p", "yuv420p", "yuv422p", "yuv444p", "yuv440p", "yuv411p":
		if pic.Strides[1] != pic.Strides[2] {
			pictures.Put(pic)
			return fmt.Errorf("%w: chroma planes of different strides", ximage.ErrUnsupported)
		}
		p.Cb, p.Cr, p.CStride = pic.Planes[1], pic.Planes[2], pic.Strides[1]
		p.Log2ChromaW, p.Log2ChromaH = pic.Log2ChromaW, pic.Log2ChromaH
	default:
		pictures.Put(pic)
		return fmt.Errorf("%w: JPEG decoded to %s", ximage.ErrUnsupported, pic.PixFmt)
	}
	*dst = p
	return nil
}
