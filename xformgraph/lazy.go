package xformgraph

import (
	"fmt"

	ximage "github.com/newtricks/newtricks/xformgraph/image"
	"github.com/newtricks/newtricks/xformgraph/jpegturbo"
)

// lazyValue is a pending spatial transform (and optionally a pending normalization) over a
// decoded source. Exactly one of planar, img, frames is the source.
type lazyValue struct {
	// src, when set and planar and img are nil, is a JPEG not decoded yet: it is decoded
	// when the plan is final, only the region the plan reads (see deferredJPEG).
	src      *deferredJPEG
	planar   *ximage.Planar // decoded planes: R, G, B (JPEG) or YCbCr (WebP), maybe a region
	channels int            // channels to produce from planar
	img      *Image
	frames   []*Image
	plan     ximage.Plan
	// norm, when set, makes the value a float tensor: (v*scale - mean[c]) / std[c].
	norm *normSpec
}

type normSpec struct {
	lut [][256]float32 // per channel
}

// lazyOf returns v as a lazy value (a copy the caller may modify).
func lazyOf(v Value) (*lazyValue, error) {
	if v.clip != nil {
		var err error
		if v, err = v.clip.materialize(); err != nil {
			return nil, err
		}
	}
	if v.lazy != nil {
		c := *v.lazy
		return &c, nil
	}
	switch v.Kind {
	case KindImage:
		return &lazyValue{img: v.Image, plan: ximage.Identity(v.Image.Width, v.Image.Height)}, nil
	case KindFrames:
		if len(v.Frames) == 0 {
			return nil, fmt.Errorf("%w: empty frame stack", ErrDecode)
		}
		f := v.Frames[0]
		for _, g := range v.Frames[1:] {
			if g.Width != f.Width || g.Height != f.Height || g.Channels != f.Channels {
				return nil, fmt.Errorf("%w: frames of different sizes", ErrTypeMismatch)
			}
		}
		return &lazyValue{frames: v.Frames, plan: ximage.Identity(f.Width, f.Height)}, nil
	}
	return nil, fmt.Errorf("%w: %v is not spatial", ErrTypeMismatch, v.Kind)
}

func (l *lazyValue) identity() bool {
	p := &l.plan
	return p.X0 == 0 && p.Y0 == 0 && p.WinW == p.SrcW && p.WinH == p.SrcH && !p.FlipH &&
		p.ResizeW == p.SrcW && p.ResizeH == p.SrcH && p.X1 == float64(p.SrcW) && p.Y1 == float64(p.SrcH)
}

// deferredJPEG is a JPEG whose decode waits for the plan over it: decode_image only probes
// the header (size, pixel limit, orientation), so that the decode, once the plan is final,
// covers only the region the plan reads, scaled down in the DCT domain when the plan
// shrinks by 2x or more. Copies of a lazy value share it, so the sample is decoded once
// (again only if a second consumer reads outside the first region).
type deferredJPEG struct {
	data          []byte
	opt           ximage.DecodeOptions
	width, height int
	// eoi: the data ends with an EOI marker. A file that does not (truncated) is decoded
	// down to its last row whatever the plan, so that the truncation is an error.
	eoi bool
	// dctScale allows a DCT-scaled decode (decode_image's dct_scale).
	dctScale bool
	p        *ximage.Planar   // the decoded region
	old      []*ximage.Planar // earlier decodes of other regions: still referenced, released at the end
}

// endsWithEOI reports whether b ends with the EOI marker (trailing zero padding allowed).
func endsWithEOI(b []byte) bool {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return len(b) >= 2 && b[len(b)-2] == 0xFF && b[len(b)-1] == 0xD9
}

// release recycles the decoded planes; the graph runner calls it when the sample is done.
func (d *deferredJPEG) release() {
	rel, ok := d.opt.JPEG.(ximage.PlanarReleaser)
	for _, p := range append(d.old, d.p) {
		if ok && p != nil && p.Owner != nil {
			rel.ReleasePlanar(p)
		}
	}
	d.p, d.old = nil, nil
}

// jpegMargin columns are decoded beyond what the plan reads on each cut side, so that
// libjpeg-turbo's fancy chroma upsampling, which treats a cut edge as a picture edge,
// does not change a column the plan reads.
const jpegMargin = 2

// region is what l's plan needs decoded from d.
func (l *lazyValue) region(d *deferredJPEG) ximage.JPEGRegion {
	if l.identity() {
		return ximage.JPEGRegion{}
	}
	p := &l.plan
	denom := 1
	if d.dctScale {
		denom = p.DCTDenom()
	}
	sw, sh := jpegturbo.ScaledSize(d.width, d.height, denom)
	x0, y0, x1, y1 := p.SourceRegion(sw, sh)
	x0, x1 = max(x0-jpegMargin, 0), min(x1+jpegMargin, sw)
	if !d.eoi {
		y1 = sh
	}
	return ximage.JPEGRegion{Denom: denom, X0: x0, Y0: y0, X1: x1, Y1: y1}
}

// load decodes what l.plan reads of l.src, unless that is done already.
func (l *lazyValue) load() error {
	d := l.src
	if d == nil || l.img != nil {
		return nil
	}
	r := l.region(d)
	if l.planar != nil && l.planar.Covers(r) {
		return nil
	}
	if d.p == nil || !d.p.Covers(r) {
		if d.p != nil {
			d.old = append(d.old, d.p)
		}
		opt := d.opt
		opt.Region = r
		p, _, ok, err := ximage.DecodePlanar(d.data, opt)
		if err == nil && !ok {
			err = fmt.Errorf("%w: JPEG without planar form", ximage.ErrUnsupported)
		}
		if err != nil {
			d.p = nil
			return fmt.Errorf("decode_image: %w", imageErr(err))
		}
		d.p = p
	}
	l.planar = d.p
	return nil
}

// tensor writes l as a tensor in one pass where it can (JPEG planes through a non-trivial
// plan straight into channel planes), else via pixels.
func (l *lazyValue) tensor(layout Layout, dt DType, lut [][256]float32) (*Tensor, error) {
	if err := l.load(); err != nil {
		return nil, err
	}
	if l.planar != nil && !l.identity() && layout.Rank() == 3 {
		return rowsToTensor(&l.plan, l.planar, l.channels, layout, dt, lut)
	}
	px, err := l.pixels()
	if err != nil {
		return nil, err
	}
	return imagesToTensor(px, l.frames != nil, layout, dt, lut)
}

// pixels computes the transformed images (one for KindImage, T for frames).
func (l *lazyValue) pixels() ([]*Image, error) {
	if err := l.load(); err != nil {
		return nil, err
	}
	return l.pixelsLoaded(), nil
}

func (l *lazyValue) pixelsLoaded() []*Image {
	p := &l.plan
	identity := l.identity()
	switch {
	case l.planar != nil:
		if identity {
			return []*Image{l.planar.ToImage(l.channels)}
		}
		return []*Image{p.ApplyPlanar(l.planar, l.channels)}
	case l.img != nil:
		if identity {
			return []*Image{l.img}
		}
		return []*Image{p.Apply(l.img)}
	}
	out := make([]*Image, len(l.frames))
	for i, f := range l.frames {
		if identity {
			out[i] = f
		} else {
			out[i] = p.Apply(f)
		}
	}
	return out
}

// materialize computes a lazy value; a materialized one is returned as is.
func (v Value) materialize() (Value, error) {
	if v.clip != nil {
		return v.clip.materialize()
	}
	if v.lazy == nil {
		return v, nil
	}
	l := v.lazy
	if l.norm != nil {
		layout := LayoutHWC
		if l.frames != nil {
			layout = LayoutTHWC
		}
		t, err := l.tensor(layout, DTypeFloat32, l.norm.lut)
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: KindTensor, Tensor: t}, nil
	}
	px, err := l.pixels()
	if err != nil {
		return Value{}, err
	}
	if l.frames != nil {
		return Value{Kind: KindFrames, Frames: px}, nil
	}
	return Value{Kind: KindImage, Image: px[0]}, nil
}

// materializeSpatial computes the pixels of l in place and resets its plan to identity
// (used when a chain cannot be fused further, e.g. a second resize).
func (l *lazyValue) materializeSpatial() error {
	px, err := l.pixels()
	if err != nil {
		return err
	}
	if l.frames != nil {
		l.frames = px
	} else {
		l.img, l.planar, l.src = px[0], nil, nil
	}
	l.plan = ximage.Identity(px[0].Width, px[0].Height)
	return nil
}
