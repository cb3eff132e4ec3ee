package xformgraph

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	ximage "github.com/newtricks/newtricks/xformgraph/image"
)

// littleEndian is true on hosts whose native float32 layout is the tensor byte order.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// scaleLUT is the per-channel table v -> v*scale (ToTensor's 1/255 by default).
func scaleLUT(channels int, scale float64) [][256]float32 {
	lut := make([][256]float32, channels)
	for c := range lut {
		for v := 0; v < 256; v++ {
			lut[c][v] = float32(float64(v) * scale)
		}
	}
	return lut
}

// normLUT is (v*scale - mean[c]) / std[c]; one mean/std value applies to every channel.
func normLUT(channels int, scale float64, mean, std []float64) ([][256]float32, error) {
	if (len(mean) != 1 && len(mean) != channels) || (len(std) != 1 && len(std) != channels) {
		return nil, fmt.Errorf("%w: mean/std of %d/%d values for %d channels", ErrBadParam, len(mean), len(std), channels)
	}
	lut := make([][256]float32, channels)
	for c := range lut {
		m, s := mean[min(c, len(mean)-1)], std[min(c, len(std)-1)]
		for v := 0; v < 256; v++ {
			lut[c][v] = float32((float64(v)*scale - m) / s)
		}
	}
	return lut, nil
}

// tensorShape returns the shape for t frames of h x w x c in layout.
func tensorShape(layout Layout, t, h, w, c int) []int {
	switch layout {
	case LayoutHWC:
		return []int{h, w, c}
	case LayoutCHW:
		return []int{c, h, w}
	case LayoutTHWC:
		return []int{t, h, w, c}
	}
	return []int{t, c, h, w}
}

// imagesToTensor writes same-sized images into one tensor in a single pass. lut nil
// means raw uint8 values (dtype must be uint8); otherwise each byte goes through
// lut[channel] and is stored as dtype.
func imagesToTensor(px []*Image, stacked bool, layout Layout, dt DType, lut [][256]float32) (*Tensor, error) {
	if len(px) == 0 {
		return nil, fmt.Errorf("%w: no images", ErrTypeMismatch)
	}
	if stacked != (layout.Rank() == 4) {
		return nil, fmt.Errorf("%w: layout %v for %d images", ErrTypeMismatch, layout, len(px))
	}
	if lut == nil && dt != DTypeUint8 {
		return nil, fmt.Errorf("%w: float output needs a scale", ErrBadParam)
	}
	if lut != nil && dt == DTypeUint8 {
		return nil, fmt.Errorf("%w: normalized values cannot be uint8", ErrBadParam)
	}
	h, w, c := px[0].Height, px[0].Width, px[0].Channels
	if lut != nil && len(lut) != c {
		return nil, fmt.Errorf("%w: normalization for %d channels, image has %d", ErrBadParam, len(lut), c)
	}
	t := &Tensor{DType: dt, Layout: layout, Shape: tensorShape(layout, len(px), h, w, c)}
	es := dt.Size()
	plane := h * w
	// Every byte is written below (each row of each image), so recycled memory will do.
	t.Data, t.pooled = tensorBytes(len(px) * plane * c * es)
	planar := layout == LayoutCHW || layout == LayoutTCHW
	for f, m := range px {
		if m.Width != w || m.Height != h || m.Channels != c {
			return nil, fmt.Errorf("%w: frame %d is %dx%dx%d, frame 0 %dx%dx%d", ErrTypeMismatch, f, m.Width, m.Height, m.Channels, w, h, c)
		}
		base := f * plane * c
		for y := 0; y < h; y++ {
			row := m.Row(y)
			if !planar {
				o := base + y*w*c
				if lut == nil {
					copy(t.Data[o:], row)
					continue
				}
				for i, v := range row {
					putElem(t.Data, o+i, dt, lut[i%c][v])
				}
				continue
			}
			for ch := 0; ch < c; ch++ {
				o := base + ch*plane + y*w
				if lut == nil {
					d := t.Data[o : o+w]
					for x := range d {
						d[x] = row[x*c+ch]
					}
					continue
				}
				l := &lut[ch]
				if dt == DTypeFloat32 {
					d := t.Data[4*o : 4*(o+w)]
					for x := 0; x < w; x++ {
						binary.LittleEndian.PutUint32(d[4*x:], math.Float32bits(l[row[x*c+ch]]))
					}
					continue
				}
				for x := 0; x < w; x++ {
					putElem(t.Data, o+x, dt, l[row[x*c+ch]])
				}
			}
		}
	}
	return t, nil
}

func putElem(b []byte, i int, dt DType, v float32) {
	switch dt {
	case DTypeFloat32:
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	case DTypeFloat16:
		binary.LittleEndian.PutUint16(b[2*i:], Float32ToFloat16(v))
	case DTypeBFloat16:
		binary.LittleEndian.PutUint16(b[2*i:], Float32ToBFloat16(v))
	case DTypeUint8:
		b[i] = uint8(min(max(math.Round(float64(v)), 0), 255))
	}
}

// convertTensor re-lays out and re-types an existing tensor (slow generic path; the image
// path above is the hot one). fn, when set, maps each value with its channel index.
func convertTensor(in *Tensor, layout Layout, dt DType, fn func(c int, v float32) float32) (*Tensor, error) {
	if in.Layout.Rank() != layout.Rank() {
		return nil, fmt.Errorf("%w: cannot turn %v into %v", ErrTypeMismatch, in.Layout, layout)
	}
	var T, C, H, W int
	T = 1
	switch in.Layout {
	case LayoutHWC:
		H, W, C = in.Shape[0], in.Shape[1], in.Shape[2]
	case LayoutCHW:
		C, H, W = in.Shape[0], in.Shape[1], in.Shape[2]
	case LayoutTHWC:
		T, H, W, C = in.Shape[0], in.Shape[1], in.Shape[2], in.Shape[3]
	case LayoutTCHW:
		T, C, H, W = in.Shape[0], in.Shape[1], in.Shape[2], in.Shape[3]
	}
	idx := func(l Layout, t, c, y, x int) int {
		if l == LayoutHWC || l == LayoutTHWC {
			return ((t*H+y)*W+x)*C + c
		}
		return ((t*C+c)*H+y)*W + x
	}
	out := &Tensor{DType: dt, Layout: layout, Shape: tensorShape(layout, T, H, W, C)}
	out.Data = make([]byte, T*C*H*W*dt.Size())
	for t := 0; t < T; t++ {
		for c := 0; c < C; c++ {
			for y := 0; y < H; y++ {
				for x := 0; x < W; x++ {
					v := in.Float32At(idx(in.Layout, t, c, y, x))
					if fn != nil {
						v = fn(c, v)
					}
					putElem(out.Data, idx(layout, t, c, y, x), dt, v)
				}
			}
		}
	}
	return out, nil
}

// rowsToTensor evaluates a plan on JPEG planes row by row and packs each RGB (or gray)
// row into the tensor while it is in cache: resample, colour conversion, normalization
// and layout in one pass.
func rowsToTensor(p *ximage.Plan, src *ximage.Planar, channels int, layout Layout, dt DType, lut [][256]float32) (*Tensor, error) {
	w, h := p.OutSize()
	if lut == nil && dt != DTypeUint8 {
		return nil, fmt.Errorf("%w: float output needs a scale", ErrBadParam)
	}
	if lut != nil && len(lut) != channels {
		return nil, fmt.Errorf("%w: normalization for %d channels, image has %d", ErrBadParam, len(lut), channels)
	}
	t := &Tensor{DType: dt, Layout: layout, Shape: tensorShape(layout, 1, h, w, channels)}
	n := w * h
	// Every byte is written below (each row of each channel), so recycled memory will do.
	t.Data, t.pooled = tensorBytes(n * channels * dt.Size())
	fast := layout == LayoutCHW && dt == DTypeFloat32 && littleEndian
	var f32 []float32
	if fast {
		f32 = unsafe.Slice((*float32)(unsafe.Pointer(&t.Data[0])), n*channels)
	}
	if fast && channels == 3 && p.ApplyPlanarLUTRows(src, lut, func(y int) (r, g, b []float32) {
		o := y * w
		return f32[o : o+w], f32[n+o : n+o+w], f32[2*n+o : 2*n+o+w]
	}) {
		return t, nil
	}
	p.ApplyPlanarRows(src, channels, func(y int, r, g, b []byte) {
		rows := [3][]byte{r, g, b}
		for ch := 0; ch < channels; ch++ {
			row := rows[ch]
			switch {
			case fast:
				l := &lut[ch]
				d := f32[ch*n+y*w : ch*n+(y+1)*w]
				d = d[:len(row)]
				for x, v := range row {
					d[x] = l[v]
				}
			case layout == LayoutCHW && lut == nil:
				copy(t.Data[ch*n+y*w:], row)
			case layout == LayoutCHW:
				for x, v := range row {
					putElem(t.Data, ch*n+y*w+x, dt, lut[ch][v])
				}
			case lut == nil:
				for x, v := range row {
					t.Data[(y*w+x)*channels+ch] = v
				}
			default:
				for x, v := range row {
					putElem(t.Data, (y*w+x)*channels+ch, dt, lut[ch][v])
				}
			}
		}
	})
	return t, nil
}
