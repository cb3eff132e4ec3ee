package xformgraph

import (
	"context"
	"errors"
	"fmt"
	"math"

	ximage "github.com/newtricks/newtricks/xformgraph/image"
)

// jpegDecoder is the JPEG decoder (libjpeg-turbo), set once at init by ops_image_jpeg.go.
var jpegDecoder ximage.JPEGDecoder

var spatial = []Kind{KindImage, KindFrames}

const maxSide = 1 << 16

func init() {
	Register(OpDef{
		Name: "decode_image",
		Doc:  "decodes JPEG (baseline, progressive, gray, CMYK), PNG (8/16-bit, alpha) or WebP; EXIF orientation applied; pixel limit checked from the header",
		In:   []Kind{KindBytes}, Out: KindImage, Lazy: true,
		Params: []ParamSpec{
			{Name: "mode", Type: ParamString, Enum: []string{"rgb", "gray", "rgba"}, Default: "rgb", Doc: "channels of the result, as Pillow's convert()"},
			{Name: "orientation", Type: ParamBool, Default: true, Doc: "apply EXIF orientation"},
			{Name: "dct_scale", Type: ParamBool, Default: true, Doc: "JPEG: when later ops shrink the picture by 2x or more, decode it at 1/2, 1/4 or 1/8 size in the DCT domain first (false: always decode at full size, as torchvision)"},
		},
		Infer: func(p Params, in Static) (Static, error) {
			return Static{Kind: KindImage, Channels: map[string]int{"rgb": 3, "gray": 1, "rgba": 4}[p.String("mode")]}, nil
		},
		Run: runDecodeImage,
	})
	Register(OpDef{
		Name: "crop", Doc: "keeps the rectangle (x, y, width, height); it must lie inside the input",
		In: spatial, Out: KindSame, Lazy: true,
		Params: []ParamSpec{
			{Name: "x", Type: ParamInt, Min: 0, Max: maxSide, Default: 0},
			{Name: "y", Type: ParamInt, Min: 0, Max: maxSide, Default: 0},
			{Name: "width", Type: ParamInt, Min: 1, Max: maxSide, Required: true},
			{Name: "height", Type: ParamInt, Min: 1, Max: maxSide, Required: true},
		},
		Infer: func(p Params, in Static) (Static, error) {
			if in.W > 0 && (p.Int("x")+p.Int("width") > int64(in.W) || p.Int("y")+p.Int("height") > int64(in.H)) {
				return in, fmt.Errorf("%w: crop outside the %dx%d input", ErrBadParam, in.W, in.H)
			}
			in.W, in.H = int(p.Int("width")), int(p.Int("height"))
			return in, nil
		},
		Run: geom(func(env *Env, s *geomState) error {
			p := env.Params
			return s.crop(int(p.Int("x")), int(p.Int("y")), int(p.Int("width")), int(p.Int("height")))
		}),
	})
	Register(OpDef{
		Name: "center_crop", Doc: "torchvision CenterCrop: size [h, w] or [s]; larger than the input is an error (no padding)",
		In: spatial, Out: KindSame, Lazy: true,
		Params: []ParamSpec{sizeParam(true)},
		Infer:  inferSize,
		Run: geom(func(env *Env, s *geomState) error {
			h, w := sizeHW(env.Params)
			iw, ih := s.size()
			if w > iw || h > ih {
				return fmt.Errorf("%w: center_crop %dx%d of a %dx%d input", ErrBadParam, w, h, iw, ih)
			}
			top := int(math.RoundToEven(float64(ih-h) / 2))
			left := int(math.RoundToEven(float64(iw-w) / 2))
			return s.crop(left, top, w, h)
		}),
	})
	Register(OpDef{
		Name: "random_resized_crop", Doc: "torchvision RandomResizedCrop: area fraction in scale, log-uniform aspect ratio in ratio, 10 tries then a central fallback, resized to size",
		In: spatial, Out: KindSame, Lazy: true,
		Params: []ParamSpec{
			sizeParam(true),
			{Name: "scale", Type: ParamFloats, MinLen: 2, MaxLen: 2, Min: 1e-6, Max: 1, Default: []float64{0.08, 1}},
			{Name: "ratio", Type: ParamFloats, MinLen: 2, MaxLen: 2, Min: 1e-3, Max: 1e3, Default: []float64{3.0 / 4, 4.0 / 3}},
			filterParam(),
		},
		Check: func(p Params) error {
			if s, r := p.Floats("scale"), p.Floats("ratio"); s[0] > s[1] || r[0] > r[1] {
				return fmt.Errorf("scale and ratio must be [low, high]")
			}
			return nil
		},
		Infer: inferSize,
		Run: geom(func(env *Env, s *geomState) error {
			iw, ih := s.size()
			top, left, h, w := rrcParams(env, iw, ih)
			if err := s.crop(left, top, w, h); err != nil {
				return err
			}
			oh, ow := sizeHW(env.Params)
			f, _ := ximage.ParseFilter(env.Params.String("filter"))
			return s.resize(ow, oh, f, env.Limits)
		}),
	})
	Register(OpDef{
		Name: "resize", Doc: "resamples to size [h, w], or the shorter side to [s] keeping the aspect ratio (torchvision Resize, antialiased)",
		In: spatial, Out: KindSame, Lazy: true,
		Params: []ParamSpec{
			sizeParam(true),
			filterParam(),
			{Name: "max_size", Type: ParamInt, Min: 1, Max: maxSide, Doc: "bound on the longer side with a single size"},
		},
		Infer: func(p Params, in Static) (Static, error) {
			if s := p.Ints("size"); len(s) == 2 {
				in.H, in.W = int(s[0]), int(s[1])
			} else if in.W > 0 {
				in.W, in.H = shorterSide(in.W, in.H, int(s[0]), int(p.Int("max_size")))
			} else {
				in.W, in.H = 0, 0
			}
			return in, nil
		},
		Run: geom(func(env *Env, s *geomState) error {
			iw, ih := s.size()
			var w, h int
			if sz := env.Params.Ints("size"); len(sz) == 2 {
				h, w = int(sz[0]), int(sz[1])
			} else {
				w, h = shorterSide(iw, ih, int(sz[0]), int(env.Params.Int("max_size")))
			}
			f, _ := ximage.ParseFilter(env.Params.String("filter"))
			return s.resize(w, h, f, env.Limits)
		}),
	})
	Register(OpDef{
		Name: "hflip", Doc: "mirrors left-right", In: spatial, Out: KindSame, Lazy: true,
		Run: geom(func(env *Env, s *geomState) error { s.l.plan.Flip(); return nil }),
	})
	Register(OpDef{
		Name: "random_hflip", Doc: "mirrors left-right with probability p (one draw per sample, so all frames of a clip agree)",
		In: spatial, Out: KindSame, Lazy: true,
		Params: []ParamSpec{{Name: "p", Type: ParamFloat, Min: 0, Max: 1, Default: 0.5}},
		Run: geom(func(env *Env, s *geomState) error {
			if Uniform(env.Rand, 0, 1) < env.Params.Float("p") {
				s.l.plan.Flip()
			}
			return nil
		}),
	})
	Register(OpDef{
		Name: "normalize", Doc: "(v*scale - mean[c]) / std[c] per channel; an image becomes a float32 HWC tensor (THWC for frames); a tensor keeps its layout",
		In: []Kind{KindImage, KindFrames, KindTensor}, Out: KindTensor, Lazy: true,
		Params: []ParamSpec{
			{Name: "mean", Type: ParamFloats, MinLen: 1, MaxLen: 4, Min: -1e6, Max: 1e6, Required: true},
			{Name: "std", Type: ParamFloats, MinLen: 1, MaxLen: 4, Min: 1e-12, Max: 1e6, Required: true},
			{Name: "scale", Type: ParamFloat, Min: 1e-12, Max: 1e6, Default: 1.0 / 255, Doc: "applied to uint8 values before mean/std (ToTensor's 1/255)"},
		},
		Infer: func(p Params, in Static) (Static, error) {
			if in.Layout == LayoutL || in.Layout == LayoutNL {
				return in, fmt.Errorf("%w: normalize takes pixels, not token ids", ErrTypeMismatch)
			}
			out := in
			out.Kind, out.DType = KindTensor, DTypeFloat32
			switch in.Kind {
			case KindImage:
				out.Layout = LayoutHWC
			case KindFrames:
				out.Layout = LayoutTHWC
			}
			if c := in.Channels; c > 0 {
				if n := len(p.Floats("mean")); n != 1 && n != c {
					return out, fmt.Errorf("%w: %d means for %d channels", ErrBadParam, n, c)
				}
				if n := len(p.Floats("std")); n != 1 && n != c {
					return out, fmt.Errorf("%w: %d stds for %d channels", ErrBadParam, n, c)
				}
			}
			return out, nil
		},
		Run: runNormalize,
	})
	Register(OpDef{
		Name: "to_tensor", Doc: "packs an image (HWC/CHW), frames (THWC/TCHW) or tensor into the given layout and dtype; float dtypes scale uint8 by scale unless the input is already normalized",
		In: []Kind{KindImage, KindFrames, KindTensor}, Out: KindTensor, Lazy: true,
		Params: []ParamSpec{
			{Name: "layout", Type: ParamString, Enum: []string{"HWC", "CHW", "THWC", "TCHW"}, Default: "CHW", Doc: "for frames, HWC/CHW mean THWC/TCHW"},
			{Name: "dtype", Type: ParamString, Enum: []string{"uint8", "float16", "bfloat16", "float32"}, Default: "float32"},
			{Name: "scale", Type: ParamFloat, Min: 1e-12, Max: 1e6, Default: 1.0 / 255},
		},
		Infer: func(p Params, in Static) (Static, error) {
			out := in
			out.Kind = KindTensor
			out.DType, _ = ParseDType(p.String("dtype"))
			l, _ := ParseLayout(p.String("layout"))
			stacked := in.Kind == KindFrames || (in.Kind == KindTensor && in.Layout.Rank() == 4)
			out.Layout = layoutFor(l, stacked)
			if in.Kind == KindTensor && in.Layout != LayoutInvalid && in.Layout.Rank() != out.Layout.Rank() {
				return out, fmt.Errorf("%w: cannot turn %v into %v", ErrTypeMismatch, in.Layout, out.Layout)
			}
			return out, nil
		},
		Run: runToTensor,
	})
}

func sizeParam(required bool) ParamSpec {
	return ParamSpec{Name: "size", Type: ParamInts, MinLen: 1, MaxLen: 2, Min: 1, Max: maxSide, Required: required, Doc: "[h, w] or [s]"}
}

func filterParam() ParamSpec {
	return ParamSpec{Name: "filter", Type: ParamString, Enum: []string{"bilinear", "bicubic", "area", "nearest"}, Default: "bilinear"}
}

func sizeHW(p Params) (h, w int) {
	s := p.Ints("size")
	if len(s) == 1 {
		return int(s[0]), int(s[0])
	}
	return int(s[0]), int(s[1])
}

func inferSize(p Params, in Static) (Static, error) {
	in.H, in.W = sizeHW(p)
	return in, nil
}

func layoutFor(l Layout, stacked bool) Layout {
	switch {
	case stacked && l == LayoutHWC:
		return LayoutTHWC
	case stacked && l == LayoutCHW:
		return LayoutTCHW
	case !stacked && l == LayoutTHWC:
		return LayoutHWC
	case !stacked && l == LayoutTCHW:
		return LayoutCHW
	}
	return l
}

// shorterSide is torchvision's _compute_resized_output_size for a single size.
func shorterSide(w, h, size, maxSize int) (int, int) {
	short, long := h, w
	if w <= h {
		short, long = w, h
	}
	ns, nl := size, int(float64(size)*float64(long)/float64(short))
	if maxSize > 0 && nl > maxSize {
		ns, nl = int(float64(maxSize)*float64(ns)/float64(nl)), maxSize
	}
	if w <= h {
		return ns, nl
	}
	return nl, ns
}

// rrcParams is torchvision RandomResizedCrop.get_params with the Env's generator.
func rrcParams(env *Env, width, height int) (top, left, h, w int) {
	area := float64(width) * float64(height)
	sc, ra := env.Params.Floats("scale"), env.Params.Floats("ratio")
	lr0, lr1 := math.Log(ra[0]), math.Log(ra[1])
	for range 10 {
		target := area * Uniform(env.Rand, sc[0], sc[1])
		aspect := expPortable(Uniform(env.Rand, lr0, lr1))
		w = int(math.RoundToEven(math.Sqrt(target * aspect)))
		h = int(math.RoundToEven(math.Sqrt(target / aspect)))
		if w > 0 && w <= width && h > 0 && h <= height {
			top = IntN(env.Rand, height-h+1)
			left = IntN(env.Rand, width-w+1)
			return
		}
	}
	in := float64(width) / float64(height)
	switch {
	case in < ra[0]:
		w = width
		h = int(math.RoundToEven(float64(w) / ra[0]))
	case in > ra[1]:
		h = height
		w = int(math.RoundToEven(float64(h) * ra[1]))
	default:
		w, h = width, height
	}
	return (height - h) / 2, (width - w) / 2, h, w
}

// geomState is what a spatial op changes: the pending plan of a lazy value.
type geomState struct{ l *lazyValue }

func (s *geomState) size() (int, int) { return s.l.plan.OutSize() }

func (s *geomState) crop(x, y, w, h int) error {
	if err := s.l.plan.Crop(x, y, w, h); err != nil {
		return fmt.Errorf("%w: %v", ErrBadParam, err)
	}
	return nil
}

func (s *geomState) resize(w, h int, f ximage.Filter, lim Limits) error {
	if int64(w)*int64(h) > lim.MaxPixels {
		return fmt.Errorf("%w: resize to %dx%d exceeds %d pixels", ErrLimit, w, h, lim.MaxPixels)
	}
	if !s.l.plan.Resize(w, h, f) {
		if err := s.l.materializeSpatial(); err != nil {
			return err
		}
		s.l.plan.Resize(w, h, f)
	}
	return nil
}

// geom adapts a plan edit into a RunFunc: the input becomes (or stays) lazy and the edit
// is recorded; pixels are computed once, by whichever consumer needs them.
func geom(edit func(env *Env, s *geomState) error) RunFunc {
	return func(ctx context.Context, env *Env, in Value) (Value, error) {
		if in.lazy != nil && in.lazy.norm != nil {
			return Value{}, fmt.Errorf("%w: spatial op after normalize", ErrTypeMismatch)
		}
		l, err := lazyOf(in)
		if err != nil {
			return Value{}, err
		}
		if err := edit(env, &geomState{l: l}); err != nil {
			return Value{}, err
		}
		return Value{Kind: in.Kind, lazy: l}, nil
	}
}

func imageErr(err error) error {
	switch {
	case errors.Is(err, ximage.ErrTooLarge):
		return fmt.Errorf("%w: %w", ErrLimit, err)
	case errors.Is(err, ximage.ErrUnsupported):
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return fmt.Errorf("%w: %w", ErrDecode, err)
}

func runDecodeImage(ctx context.Context, env *Env, in Value) (Value, error) {
	ch := map[string]int{"rgb": 3, "gray": 1, "rgba": 4}[env.Params.String("mode")]
	orient := env.Params.Bool("orientation")
	opt := ximage.DecodeOptions{MaxPixels: env.Limits.MaxPixels, Channels: ch, IgnoreOrientation: !orient, JPEG: jpegDecoder}
	if ch != 4 {
		// A JPEG with a planar form and nothing to rotate is decoded later, once the plan
		// over it is known (see deferredJPEG); the header is checked now.
		info, err := ximage.ProbeLimited(in.Bytes, opt.MaxPixels)
		if err != nil {
			return Value{}, imageErr(err)
		}
		if info.Format == ximage.FormatJPEG && info.Components != 4 && info.Precision == 8 && (!orient || info.Orientation <= 1) {
			d := &deferredJPEG{data: in.Bytes, opt: opt, width: info.Width, height: info.Height, eoi: endsWithEOI(in.Bytes),
				dctScale: env.Params.Bool("dct_scale")}
			env.OnDone(d.release)
			return Value{Kind: KindImage, lazy: &lazyValue{src: d, channels: ch, plan: ximage.Identity(info.Width, info.Height)}}, nil
		}
		p, info, ok, err := ximage.DecodePlanar(in.Bytes, opt)
		if err != nil {
			return Value{}, imageErr(err)
		}
		if ok {
			rel, canRelease := jpegDecoder.(ximage.PlanarReleaser)
			canRelease = canRelease && p.Owner != nil
			if !orient || info.Orientation <= 1 {
				if canRelease {
					env.OnDone(func() { rel.ReleasePlanar(p) })
				}
				return Value{Kind: KindImage, lazy: &lazyValue{planar: p, channels: ch, plan: ximage.Identity(p.Width, p.Height)}}, nil
			}
			m := ximage.Orient(p.ToImage(ch), info.Orientation)
			if canRelease {
				rel.ReleasePlanar(p)
			}
			return Value{Kind: KindImage, Image: m}, nil
		}
	}
	m, err := ximage.Decode(in.Bytes, opt)
	if err != nil {
		return Value{}, imageErr(err)
	}
	return Value{Kind: KindImage, Image: m}, nil
}

func runNormalize(ctx context.Context, env *Env, in Value) (Value, error) {
	p := env.Params
	if in.Kind == KindTensor {
		v, err := in.materialize()
		if err != nil {
			return Value{}, err
		}
		t := v.Tensor
		mean, std, scale := p.Floats("mean"), p.Floats("std"), p.Float("scale")
		if t.DType != DTypeUint8 {
			scale = 1
		}
		t2, err := convertTensor(t, t.Layout, DTypeFloat32, func(c int, x float32) float32 {
			return float32((float64(x)*scale - mean[min(c, len(mean)-1)]) / std[min(c, len(std)-1)])
		})
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: KindTensor, Tensor: t2}, nil
	}
	l, err := lazyOf(in)
	if err != nil {
		return Value{}, err
	}
	if l.norm != nil {
		return Value{}, fmt.Errorf("%w: normalize twice", ErrTypeMismatch)
	}
	c := l.outChannels()
	lut, err := normLUT(c, p.Float("scale"), p.Floats("mean"), p.Floats("std"))
	if err != nil {
		return Value{}, err
	}
	l.norm = &normSpec{lut: lut}
	return Value{Kind: KindTensor, lazy: l}, nil
}

func (l *lazyValue) outChannels() int {
	switch {
	case l.planar != nil, l.src != nil:
		return l.channels
	case l.img != nil:
		return l.img.Channels
	}
	return l.frames[0].Channels
}

func runToTensor(ctx context.Context, env *Env, in Value) (Value, error) {
	p := env.Params
	dt, _ := ParseDType(p.String("dtype"))
	lay, _ := ParseLayout(p.String("layout"))
	if in.Kind == KindTensor && in.lazy == nil {
		t, err := convertTensor(in.Tensor, layoutFor(lay, in.Tensor.Layout.Rank() == 4), dt, nil)
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: KindTensor, Tensor: t}, nil
	}
	l, err := lazyOf(in)
	if err != nil && in.lazy == nil {
		return Value{}, err
	}
	if in.lazy != nil {
		l = in.lazy
	}
	stacked := l.frames != nil
	var lut [][256]float32
	switch {
	case l.norm != nil:
		lut = l.norm.lut
	case dt != DTypeUint8:
		lut = scaleLUT(l.outChannels(), p.Float("scale"))
	}
	if l.norm != nil && dt == DTypeUint8 {
		return Value{}, fmt.Errorf("%w: uint8 tensor of normalized values", ErrBadParam)
	}
	t, err := l.tensor(layoutFor(lay, stacked), dt, lut)
	if err != nil {
		return Value{}, err
	}
	return Value{Kind: KindTensor, Tensor: t}, nil
}
