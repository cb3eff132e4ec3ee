package xformgraph

import (
	"fmt"
	"math"

	ximage "github.com/newtricks/newtricks/xformgraph/image"
)

// lazyValue is a pending spatial transform (and optionally a pending normalization) over a
// decoded source. Exactly one of planar, img, frames is the source.
type lazyValue struct {
	// src, when set and planar and img are nil, is a JPEG not decoded yet: it is decoded
	// when the plan is final, down to the last row the plan reads.
	src      *deferredJPEG
	planar   *ximage.Planar // JPEG planes, not yet color converted
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
// the header (size, pixel limit, orientation), so a crop known later can stop the decode
// below its last row. Copies of a lazy value share it, so the sample is decoded once (twice
// only if a second consumer needs rows below those decoded first).
type deferredJPEG struct {
	data []byte
	opt  ximage.DecodeOptions
	p    *ximage.Planar   // decoded planes, the top p.Height rows
	img  *Image           // or the decoded image, when the JPEG has no planar form
	old  []*ximage.Planar // earlier, shorter decodes: still referenced, released at the end
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

// covers reports whether planes p hold the rows a plan reading rows rows (0: all) needs.
func covers(p *ximage.Planar, rows int) bool {
	return p.FullHeight == 0 || (rows > 0 && rows <= p.Height)
}

// load decodes l.src, down to the last row l.plan reads, unless that is done already.
func (l *lazyValue) load() error {
	d := l.src
	if d == nil || l.img != nil {
		return nil
	}
	rows := 0 // all
	if p := &l.plan; !l.identity() {
		rows = max(int(math.Ceil(p.Y1)), 1)
	}
	if l.planar != nil && covers(l.planar, rows) {
		return nil
	}
	if d.img == nil && (d.p == nil || !covers(d.p, rows)) {
		if d.p != nil {
			d.old = append(d.old, d.p) // decoded for a smaller crop: decode again
		}
		opt := d.opt
		opt.Rows = rows
		p, _, ok, err := ximage.DecodePlanar(d.data, opt, 0)
		if err == nil && !ok {
			d.img, err = ximage.Decode(d.data, opt)
			if err == nil && d.img.Channels != l.channels {
				err = fmt.Errorf("%d channels, want %d", d.img.Channels, l.channels)
			}
		}
		if err != nil {
			return fmt.Errorf("decode_image: %w", imageErr(err))
		}
		d.p = p
	}
	if d.img != nil {
		l.planar, l.img = nil, d.img
		return nil
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
