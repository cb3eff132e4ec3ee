package xformgraph

import (
	"fmt"

	ximage "github.com/newtricks/newtricks/xformgraph/image"
)

// lazyValue is a pending spatial transform (and optionally a pending normalization) over a
// decoded source. Exactly one of planar, img, frames is the source.
type lazyValue struct {
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

// tensor writes l as a tensor in one pass where it can (JPEG planes through a non-trivial
// plan straight into channel planes), else via pixels.
func (l *lazyValue) tensor(layout Layout, dt DType, lut [][256]float32) (*Tensor, error) {
	if l.planar != nil && !l.identity() && layout.Rank() == 3 {
		return rowsToTensor(&l.plan, l.planar, l.channels, layout, dt, lut)
	}
	return imagesToTensor(l.pixels(), l.frames != nil, layout, dt, lut)
}

// pixels computes the transformed images (one for KindImage, T for frames).
func (l *lazyValue) pixels() []*Image {
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
	px := l.pixels()
	if l.frames != nil {
		return Value{Kind: KindFrames, Frames: px}, nil
	}
	return Value{Kind: KindImage, Image: px[0]}, nil
}

// materializeSpatial computes the pixels of l in place and resets its plan to identity
// (used when a chain cannot be fused further, e.g. a second resize).
func (l *lazyValue) materializeSpatial() {
	px := l.pixels()
	if l.frames != nil {
		l.frames = px
	} else {
		l.img, l.planar = px[0], nil
	}
	l.plan = ximage.Identity(px[0].Width, px[0].Height)
}
