package image

import (
	"fmt"
	"math"
	"sync"
)

// Filter is a resampling filter. All filters are antialiased when shrinking: the support
// grows with the scale factor, as in Pillow's Image.resize (and torchvision with
// antialias=True).
type Filter uint8

const (
	FilterBilinear Filter = iota + 1 // triangle, support 1
	FilterBicubic                    // Keys a = -0.5, support 2
	FilterBox                        // box, support 0.5: "area" averaging when shrinking
	FilterNearest                    // nearest neighbour (no antialiasing), as Pillow
)

// ParseFilter maps the names used in graph specs.
func ParseFilter(s string) (Filter, bool) {
	switch s {
	case "bilinear":
		return FilterBilinear, true
	case "bicubic":
		return FilterBicubic, true
	case "area", "box":
		return FilterBox, true
	case "nearest":
		return FilterNearest, true
	}
	return 0, false
}

func (f Filter) support() float64 {
	switch f {
	case FilterBilinear:
		return 1
	case FilterBicubic:
		return 2
	}
	return 0.5
}

func (f Filter) eval(x float64) float64 {
	switch f {
	case FilterBilinear:
		x = math.Abs(x)
		if x < 1 {
			return 1 - x
		}
		return 0
	case FilterBicubic:
		const a = -0.5
		x = math.Abs(x)
		if x < 1 {
			return float64(float64(float64((a+2)*x)-(a+3))*x*x) + 1
		}
		if x < 2 {
			return (float64(float64(float64((x-5)*x)+8)*x) - 4) * a
		}
		return 0
	}
	if x > -0.5 && x <= 0.5 {
		return 1
	}
	return 0
}

// coeffs are the per-output-sample taps along one axis: output i reads count[i] inputs
// starting at start[i] with weights w[i*k : i*k+count[i]].
type coeffs struct {
	k     int
	start []int
	count []int
	w     []float32
}

// makeCoeffs follows Pillow's precompute_coeffs: input box [in0, in1) of an axis of
// length inSize mapped onto outSize samples. Taps are clipped to the box (rounded out to
// whole samples), which is what cropping first and then resizing does in torchvision.
func makeCoeffs(inSize int, in0, in1 float64, outSize int, f Filter) coeffs {
	scale := (in1 - in0) / float64(outSize)
	if f == FilterNearest {
		c := coeffs{k: 1, start: make([]int, outSize), count: make([]int, outSize), w: make([]float32, outSize)}
		for i := range outSize {
			x := int(in0 + float64((float64(i)+0.5)*scale))
			c.start[i], c.count[i], c.w[i] = min(max(x, 0), inSize-1), 1, 1
		}
		return c
	}
	lo := max(int(math.Floor(in0)), 0)
	hi := min(int(math.Ceil(in1)), inSize)
	fs := max(scale, 1.0)
	support := float64(f.support() * fs)
	k := int(math.Ceil(support))*2 + 1
	c := coeffs{k: k, start: make([]int, outSize), count: make([]int, outSize), w: make([]float32, outSize*k)}
	ww := make([]float64, k)
	for i := range outSize {
		center := in0 + float64((float64(i)+0.5)*scale)
		xmin := max(int(math.Floor(center-support+0.5)), lo)
		xmax := min(int(math.Floor(center+support+0.5)), hi)
		n := max(xmax-xmin, 0)
		n = min(n, k)
		sum := 0.0
		for x := 0; x < n; x++ {
			ww[x] = f.eval((float64(x+xmin) - center + 0.5) / fs)
			sum += ww[x]
		}
		for x := 0; x < n; x++ {
			if sum != 0 {
				ww[x] /= sum
			}
			c.w[i*k+x] = float32(ww[x])
		}
		if n == 0 { // degenerate box: take the nearest sample
			xmin, n = min(max(int(center), 0), inSize-1), 1
			c.w[i*k] = 1
		}
		c.start[i], c.count[i] = xmin, n
	}
	return c
}

// Plan is a fused geometric transform: take the box of the source, resample it to a
// ResizeW x ResizeH grid, keep the window (WinX, WinY, WinW, WinH) of that grid, mirror it
// left-right if FlipH. A crop is a box with a grid of the same size; crop-after-resize is
// a window; flip-before-crop mirrors the window, so any chain of crops, at most one
// resize and flips is one Plan, evaluated in one pass.
type Plan struct {
	SrcW, SrcH             int
	X0, Y0, X1, Y1         float64 // box in source pixels
	ResizeW, ResizeH       int
	WinX, WinY, WinW, WinH int
	FlipH                  bool
	Filter                 Filter
	Resized                bool // a resize has been applied (a second one materializes)

	// memo keeps the last axes computed, for the same plan and arguments (the region a
	// decode needs and the resample ask for the same ones). Copies share it read-only.
	memo *axesMemo
}

type axesMemo struct {
	key            Plan // memo nil
	scaleX, scaleY float64
	inW, inH       int
	cx, cy         coeffs
}

// Identity is the plan that returns a w x h source as is.
func Identity(w, h int) Plan {
	return Plan{SrcW: w, SrcH: h, X1: float64(w), Y1: float64(h), ResizeW: w, ResizeH: h, WinW: w, WinH: h, Filter: FilterBilinear}
}

// OutSize is the size of the plan's result.
func (p *Plan) OutSize() (int, int) { return p.WinW, p.WinH }

// Crop keeps the rectangle (x, y, w, h) of the current output (which must contain it).
func (p *Plan) Crop(x, y, w, h int) error {
	if x < 0 || y < 0 || w <= 0 || h <= 0 || x+w > p.WinW || y+h > p.WinH {
		return fmt.Errorf("crop (%d,%d %dx%d) outside %dx%d", x, y, w, h, p.WinW, p.WinH)
	}
	if p.FlipH {
		x = p.WinW - x - w
	}
	if !p.Resized {
		// Still in source pixels: shrink the box, keep scale 1.
		p.X0 += float64(p.WinX + x)
		p.Y0 += float64(p.WinY + y)
		p.X1, p.Y1 = p.X0+float64(w), p.Y0+float64(h)
		p.WinX, p.WinY, p.ResizeW, p.ResizeH = 0, 0, w, h
	} else {
		p.WinX += x
		p.WinY += y
	}
	p.WinW, p.WinH = w, h
	return nil
}

// Resize resamples the current output to w x h. ok is false when a resize was already
// applied after which cropping happened (the caller materializes and starts a new plan).
func (p *Plan) Resize(w, h int, f Filter) bool {
	if p.Resized && (p.WinX != 0 || p.WinY != 0 || p.WinW != p.ResizeW || p.WinH != p.ResizeH) {
		return false
	}
	if p.Resized {
		return false // two resamplings are not one: keep Pillow's semantics
	}
	p.ResizeW, p.ResizeH, p.WinX, p.WinY, p.WinW, p.WinH = w, h, 0, 0, w, h
	p.Filter, p.Resized = f, true
	return true
}

// Flip mirrors the current output left-right.
func (p *Plan) Flip() { p.FlipH = !p.FlipH }

func (p *Plan) noResample() bool {
	return p.X0 == math.Trunc(p.X0) && p.Y0 == math.Trunc(p.Y0) &&
		float64(p.ResizeW) == p.X1-p.X0 && float64(p.ResizeH) == p.Y1-p.Y0
}

// axis coefficients of the window, in output order.
// The coefficients returned are shared (with the memo): callers must not modify them.
func (p *Plan) axes(scaleX, scaleY float64, inW, inH int) (cx, cy coeffs) {
	key := *p
	key.memo = nil
	if m := p.memo; m != nil && m.key == key && m.scaleX == scaleX && m.scaleY == scaleY && m.inW == inW && m.inH == inH {
		return m.cx, m.cy
	}
	cx = makeCoeffs(inW, p.X0*scaleX, p.X1*scaleX, p.ResizeW, p.Filter)
	cy = makeCoeffs(inH, p.Y0*scaleY, p.Y1*scaleY, p.ResizeH, p.Filter)
	cx = cx.window(p.WinX, p.WinW, p.FlipH)
	cy = cy.window(p.WinY, p.WinH, false)
	p.memo = &axesMemo{key: key, scaleX: scaleX, scaleY: scaleY, inW: inW, inH: inH, cx: cx, cy: cy}
	return
}

// planeAxes are the plan's coefficients over the full-resolution planes of src (luma, or
// R, G, B), indexed from the region src holds. The plan is made for a SrcW x SrcH picture;
// src may be that picture scaled (a DCT-scaled or lowres decode) and only a region of it.
func (p *Plan) planeAxes(src *Planar) (cx, cy coeffs) {
	fw, fh := src.fullWidth(), src.fullHeight()
	cx, cy = p.axes(float64(fw)/float64(p.SrcW), float64(fh)/float64(p.SrcH), fw, fh)
	if src.OffX != 0 || src.OffY != 0 || src.Width != fw || src.Height != fh {
		cx, cy = cx.shift(src.OffX, src.Width), cy.shift(src.OffY, src.Height)
	}
	return
}

// shift re-indexes c from off, for a region n samples long that must hold every tap.
func (c coeffs) shift(off, n int) coeffs {
	out := c
	out.start = make([]int, len(c.start))
	for i, s := range c.start {
		s -= off
		if s < 0 || s+c.count[i] > n {
			panic(fmt.Sprintf("image: plan reads samples %d..%d outside the decoded region of %d", s, s+c.count[i], n))
		}
		out.start[i] = s
	}
	return out
}

// SourceRegion is the rectangle [x0, x1) x [y0, y1) of a w x h rendering of the plan's
// source (the source itself, or a scaled decode of it) that the plan reads.
func (p *Plan) SourceRegion(w, h int) (x0, y0, x1, y1 int) {
	cx, cy := p.axes(float64(w)/float64(p.SrcW), float64(h)/float64(p.SrcH), w, h)
	bounds := func(c coeffs) (lo, hi int) {
		lo, hi = math.MaxInt, 0
		for i, s := range c.start {
			lo, hi = min(lo, s), max(hi, s+c.count[i])
		}
		return lo, hi
	}
	x0, x1 = bounds(cx)
	y0, y1 = bounds(cy)
	return
}

// DCTDenom is the largest DCT-domain downscale (1, 2, 4 or 8) after which the plan still
// shrinks (or keeps) the picture in both directions: decoding at 1/DCTDenom and then
// resampling replaces most of an antialiased shrink by the IDCT's own.
func (p *Plan) DCTDenom() int {
	if !p.Resized {
		return 1
	}
	bw, bh := p.X1-p.X0, p.Y1-p.Y0
	d := 1
	for d < 8 && bw >= float64(2*d*p.ResizeW) && bh >= float64(2*d*p.ResizeH) {
		d *= 2
	}
	return d
}

func (c coeffs) window(off, n int, flip bool) coeffs {
	if off == 0 && n == len(c.start) && !flip {
		return c
	}
	out := coeffs{k: c.k, start: make([]int, n), count: make([]int, n), w: make([]float32, n*c.k)}
	for i := range n {
		s := off + i
		if flip {
			s = off + n - 1 - i
		}
		out.start[i], out.count[i] = c.start[s], c.count[s]
		copy(out.w[i*c.k:(i+1)*c.k], c.w[s*c.k:(s+1)*c.k])
	}
	return out
}

// Apply evaluates the plan on an interleaved image.
func (p *Plan) Apply(m *Image) *Image {
	ow, oh := p.WinW, p.WinH
	c := m.Channels
	if p.noResample() {
		x0, y0 := int(p.X0)+p.WinX, int(p.Y0)+p.WinY
		out := NewImage(ow, oh, c)
		for y := 0; y < oh; y++ {
			src := m.Pix[(y0+y)*m.Stride+x0*c:]
			dst := out.Row(y)
			if !p.FlipH {
				copy(dst, src[:ow*c])
				continue
			}
			for x := 0; x < ow; x++ {
				copy(dst[x*c:x*c+c], src[(ow-1-x)*c:(ow-x)*c])
			}
		}
		return out
	}
	cx, cy := p.axes(1, 1, m.Width, m.Height)
	out := NewImage(ow, oh, c)
	resamplePlane(m.Pix, m.Stride, c, cx, cy, out.Pix, out.Stride, nil)
	return out
}

// ApplyPlanar evaluates the plan straight from YCbCr planes into an RGB (channels 3) or
// gray (channels 1) interleaved image.
func (p *Plan) ApplyPlanar(src *Planar, channels int) *Image {
	planes := p.ApplyPlanarPlanes(src, channels)
	out := NewImage(p.WinW, p.WinH, channels)
	if channels == 1 {
		copy(out.Pix, planes[0])
		return out
	}
	r, g, b := planes[0], planes[1], planes[2]
	for i := range r {
		out.Pix[3*i], out.Pix[3*i+1], out.Pix[3*i+2] = r[i], g[i], b[i]
	}
	return out
}

// ApplyPlanarPlanes evaluates the plan straight from YCbCr planes into separate output
// planes (R, G, B, or one gray plane), WinW x WinH each: every source plane is resampled
// at its own resolution and the colour conversion runs on the output pixels only, which
// is where the fused path saves most. Planes suit a CHW tensor without a transpose.
func (p *Plan) ApplyPlanarPlanes(src *Planar, channels int) [][]byte {
	ow, oh := p.WinW, p.WinH
	// Scale between the plan's source coordinates and the planar picture (a scaled decode
	// is smaller than the source the plan was made for).
	sx := float64(src.fullWidth()) / float64(p.SrcW)
	sy := float64(src.fullHeight()) / float64(p.SrcH)
	yb := getBytes(ow * oh)
	cx, cy := p.planeAxes(src)
	resamplePlane(src.Y, src.YStride, 1, cx, cy, yb, ow, nil)
	if src.RGB {
		gb, bb := getBytes(ow*oh), getBytes(ow*oh)
		resamplePlane(src.Cb, src.CStride, 1, cx, cy, gb, ow, nil)
		resamplePlane(src.Cr, src.CStride, 1, cx, cy, bb, ow, nil)
		if channels == 1 { // Pillow's convert("L"): ITU-R 601-2 luma
			for i := range yb {
				yb[i] = uint8((uint32(yb[i])*19595 + uint32(gb[i])*38470 + uint32(bb[i])*7471 + 0x8000) >> 16)
			}
			ReleasePlanes([][]byte{gb, bb})
			return [][]byte{yb}
		}
		return [][]byte{yb, gb, bb}
	}
	if channels == 1 {
		return [][]byte{yb}
	}
	if src.Gray() {
		return [][]byte{yb, yb, yb}
	}
	cbb := getBytes(ow * oh)
	crb := getBytes(ow * oh)
	cw, ch := src.ChromaSize()
	csx := sx / float64(int(1)<<src.Log2ChromaW)
	csy := sy / float64(int(1)<<src.Log2ChromaH)
	ccx, ccy := p.axes(csx, csy, cw, ch)
	resamplePlane(src.Cb, src.CStride, 1, ccx, ccy, cbb, ow, nil)
	resamplePlane(src.Cr, src.CStride, 1, ccx, ccy, crb, ow, nil)
	full := src.FullRange
	// Convert in place: Y -> R, Cb -> G, Cr -> B.
	if full {
		for i := range yb {
			Y := int32(yb[i])
			cb, cr := cbb[i], crb[i]
			yb[i], cbb[i], crb[i] = clip8(Y+crR[cr]), clip8(Y+((cbG[cb]+crG[cr])>>scaleBits)), clip8(Y+cbB[cb])
		}
	} else {
		for i := range yb {
			yb[i], cbb[i], crb[i] = yccToRGB(yb[i], cbb[i], crb[i], false)
		}
	}
	return [][]byte{yb, cbb, crb}
}

// ApplyPlanarRows is ApplyPlanarPlanes delivered row by row: emit(y, r, g, b) gets output
// row y (WinW bytes per channel; g and b nil for channels 1) while it is still in cache, so
// a tensor writer can pack it without another pass over whole planes. The rows are
// reused after emit returns.
func (p *Plan) ApplyPlanarRows(src *Planar, channels int, emit func(y int, r, g, b []byte)) {
	if channels == 1 || src.Gray() || !src.FullRange || src.RGB {
		planes := p.ApplyPlanarPlanes(src, channels)
		ow := p.WinW
		for y := 0; y < p.WinH; y++ {
			row := func(i int) []byte { return planes[i][y*ow : (y+1)*ow] }
			if len(planes) == 1 {
				emit(y, row(0), nil, nil)
			} else {
				emit(y, row(0), row(1), row(2))
			}
		}
		ReleasePlanes(planes)
		return
	}
	ow, oh := p.WinW, p.WinH
	sx := float64(src.fullWidth()) / float64(p.SrcW)
	sy := float64(src.fullHeight()) / float64(p.SrcH)
	yb, cbb := getBytes(ow*oh), getBytes(ow*oh)
	cx, cy := p.planeAxes(src)
	resamplePlane(src.Y, src.YStride, 1, cx, cy, yb, ow, nil)
	cw, ch := src.ChromaSize()
	ccx, ccy := p.axes(sx/float64(int(1)<<src.Log2ChromaW), sy/float64(int(1)<<src.Log2ChromaH), cw, ch)
	resamplePlane(src.Cb, src.CStride, 1, ccx, ccy, cbb, ow, nil)
	crRow := getBytes(ow)
	r, g, b := getBytes(ow), getBytes(ow), getBytes(ow)
	resamplePlane(src.Cr, src.CStride, 1, ccx, ccy, crRow, 0, func(y int, cr []byte) {
		yr, cbr := yb[y*ow:(y+1)*ow], cbb[y*ow:(y+1)*ow]
		cr, r, g, b := cr[:len(yr)], r[:len(yr)], g[:len(yr)], b[:len(yr)]
		cbr = cbr[:len(yr)]
		for x, yy := range yr {
			Y := int32(yy)
			cb, crv := cbr[x], cr[x]
			r[x], g[x], b[x] = clip8(Y+crR[crv]), clip8(Y+((cbG[cb]+crG[crv])>>scaleBits)), clip8(Y+cbB[cb])
		}
		emit(y, r, g, b)
	})
	ReleasePlanes([][]byte{yb, cbb, crRow, r, g, b})
}

// ApplyPlanarLUTRows is the float fast path of ApplyPlanarRows for full-range colour
// planes: each output pixel's R, G, B (before clamping) index tables built from lut, so
// colour conversion, clamping and per-channel normalization are three lookups. dst(y)
// returns where row y of each channel goes (WinW floats each).
func (p *Plan) ApplyPlanarLUTRows(src *Planar, lut [][256]float32, dst func(y int) (r, g, b []float32)) bool {
	if src.Gray() || !src.FullRange || len(lut) != 3 {
		return false
	}
	if src.RGB {
		p.applyRGBLUTRows(src, lut, dst)
		return true
	}
	// ext[c][i] = lut[c][clamp(i - 256)]: the converted value before clamping lies in
	// [-256, 511] for any Y, Cb, Cr. 1024 entries so that an index masked with 1023 (a
	// no-op here) needs no bounds check in the loop below.
	var ext [3][1024]float32
	for c := range ext {
		for i := range ext[c] {
			ext[c][i] = lut[c][min(max(i-256, 0), 255)]
		}
	}
	ow, oh := p.WinW, p.WinH
	sx := float64(src.fullWidth()) / float64(p.SrcW)
	sy := float64(src.fullHeight()) / float64(p.SrcH)
	yb, cbb := getBytes(ow*oh), getBytes(ow*oh)
	cx, cy := p.planeAxes(src)
	resamplePlane(src.Y, src.YStride, 1, cx, cy, yb, ow, nil)
	cw, ch := src.ChromaSize()
	ccx, ccy := p.axes(sx/float64(int(1)<<src.Log2ChromaW), sy/float64(int(1)<<src.Log2ChromaH), cw, ch)
	resamplePlane(src.Cb, src.CStride, 1, ccx, ccy, cbb, ow, nil)
	crRow := getBytes(ow)
	er, eg, eb := &ext[0], &ext[1], &ext[2]
	idx := make([]uint16, 3*ow)
	ri, gi, bi := idx[:ow], idx[ow:2*ow], idx[2*ow:]
	resamplePlane(src.Cr, src.CStride, 1, ccx, ccy, crRow, 0, func(y int, cr []byte) {
		yr, cbr := yb[y*ow:(y+1)*ow], cbb[y*ow:(y+1)*ow]
		r, g, b := dst(y)
		r, g, b = r[:len(yr)], g[:len(yr)], b[:len(yr)]
		yccIndex(yr, cbr, cr[:len(yr)], ri, gi, bi)
		ri, gi, bi := ri[:len(yr)], gi[:len(yr)], bi[:len(yr)]
		for x := range r {
			r[x] = er[ri[x]&1023]
			g[x] = eg[gi[x]&1023]
			b[x] = eb[bi[x]&1023]
		}
	})
	ReleasePlanes([][]byte{yb, cbb, crRow})
	return true
}

// applyRGBLUTRows is ApplyPlanarLUTRows for R, G, B planes: three resamples, then each
// channel through its table, the last channel row by row while in cache.
func (p *Plan) applyRGBLUTRows(src *Planar, lut [][256]float32, dst func(y int) (r, g, b []float32)) {
	ow, oh := p.WinW, p.WinH
	cx, cy := p.planeAxes(src)
	h := prepH(cx, 1)
	defer h.release()
	rb, gb := getBytes(ow*oh), getBytes(ow*oh)
	resamplePlaneH(src.Y, src.YStride, &h, cy, rb, ow, nil)
	resamplePlaneH(src.Cb, src.CStride, &h, cy, gb, ow, nil)
	bRow := getBytes(ow)
	lr, lg, lb := &lut[0], &lut[1], &lut[2]
	resamplePlaneH(src.Cr, src.CStride, &h, cy, bRow, 0, func(y int, brow []byte) {
		r, g, b := dst(y)
		lutRow(r, rb[y*ow:(y+1)*ow], lr)
		lutRow(g, gb[y*ow:(y+1)*ow], lg)
		lutRow(b, brow[:ow], lb)
	})
	ReleasePlanes([][]byte{rb, gb, bRow})
}

// fixedTaps rewrites c so that every output reads exactly c.k inputs (zero weights pad the
// short ones, start shifted left at the right edge), which lets the inner loops run with a
// constant trip count. ok is false when the axis is shorter than k.
func (c coeffs) fixedTaps(inSize int) (coeffs, bool) {
	k := 0
	for _, n := range c.count {
		k = max(k, n)
	}
	if inSize < k {
		return c, false
	}
	out := coeffs{k: k, start: make([]int, len(c.start)), count: make([]int, len(c.start)), w: make([]float32, len(c.start)*k)}
	for i, s := range c.start {
		n := c.count[i]
		shift := 0
		if s+k > inSize {
			shift = s + k - inSize
			s -= shift
		}
		out.start[i], out.count[i] = s, k
		copy(out.w[i*k+shift:i*k+shift+n], c.w[i*c.k:i*c.k+n])
	}
	return out, true
}

var (
	tmpPool   = sync.Pool{New: func() any { return new([]float32) }}
	planePool = sync.Pool{New: func() any { return new([]byte) }}
)

func getBytes(n int) []byte {
	b := planePool.Get().(*[]byte)
	if cap(*b) < n {
		*b = make([]byte, n)
	}
	return (*b)[:n]
}

// ReleasePlanes returns planes from ApplyPlanarPlanes for reuse; the caller must not
// touch them afterwards. Optional: unreleased planes are simply garbage collected.
func ReleasePlanes(planes [][]byte) {
	for i, p := range planes {
		if i > 0 && len(p) > 0 && &p[0] == &planes[0][0] {
			continue // gray replicated into three planes: release once
		}
		planePool.Put(&p)
	}
}

// haxis is a horizontal axis prepared for resamplePlaneH: coefficients with a fixed tap
// count and the assembly pass's tables, built once for every plane that uses the axis.
type haxis struct {
	cx    coeffs
	fx    coeffs
	fixed bool
	hp    *hpass // nil: no assembly pass
	srcW  int
	c     int
}

var hpassPool = sync.Pool{New: func() any { return new(hpass) }}

// prepH prepares cx for planes with c interleaved channels; release it when done.
func prepH(cx coeffs, c int) haxis {
	h := haxis{cx: cx, fx: cx, c: c}
	for i := range cx.start {
		h.srcW = max(h.srcW, cx.start[i]+cx.count[i])
	}
	if c == 1 {
		// Shifting taps left stays within the columns the coefficients already read.
		h.fx, h.fixed = cx.fixedTaps(h.srcW)
		if h.fixed {
			buf := hpassPool.Get().(*hpass)
			var ok bool
			if h.hp, ok = newHpass(h.fx, h.srcW, buf); !ok {
				hpassPool.Put(buf)
				h.hp = nil
			}
		}
	}
	return h
}

func (h *haxis) release() {
	if h.hp != nil {
		hpassPool.Put(h.hp)
		h.hp = nil
	}
}

// resamplePlane runs the two separable passes (horizontal then vertical, as Pillow) over
// an interleaved plane with c channels, writing rounded, clamped bytes.
func resamplePlane(src []byte, stride, c int, cx, cy coeffs, dst []byte, dstStride int, rowFn func(i int, row []byte)) {
	h := prepH(cx, c)
	resamplePlaneH(src, stride, &h, cy, dst, dstStride, rowFn)
	h.release()
}

// windowRows is how many rows of the horizontal pass resamplePlaneH keeps (~28 KB for 224
// floats a row, in L1) when a region is taller.
const windowRows = 32

// resamplePlaneH is resamplePlane with the horizontal axis prepared. The horizontal pass
// runs just ahead of the vertical one in a window of rows that slides down the region
// (the rows still needed move to its top when it fills), so the intermediate stays in L1
// instead of a float copy of the whole region. The arithmetic is the same as a full
// horizontal pass followed by the vertical one.
func resamplePlaneH(src []byte, stride int, h *haxis, cy coeffs, dst []byte, dstStride int, rowFn func(i int, row []byte)) {
	cx, c := h.cx, h.c
	ow, oh := len(cx.start), len(cy.start)
	// Rows of the source the vertical taps need; the window needs them in order.
	lo, hi, kmax := math.MaxInt, 0, 0
	monotonic := true
	for i := range oh {
		lo = min(lo, cy.start[i])
		hi = max(hi, cy.start[i]+cy.count[i])
		kmax = max(kmax, cy.count[i])
		if i > 0 && cy.start[i] < cy.start[i-1] {
			monotonic = false
		}
	}
	rw := ow * c
	B := hi - lo // window rows: the whole region unless a window is smaller
	window := monotonic && max(windowRows, 2*kmax+2) < B
	if window {
		B = max(windowRows, 2*kmax+2)
	}
	tp := tmpPool.Get().(*[]float32)
	defer tmpPool.Put(tp)
	if cap(*tp) < B*rw {
		*tp = make([]float32, B*rw)
	}
	tmp := (*tp)[:B*rw]
	fx, fixed, hp := h.fx, h.fixed, h.hp
	b0, next := lo, lo // b0: the source row in window row 0; next: first row not computed
	compute := func(keep, upTo int) {
		if next < keep {
			next = keep // rows no output reads (a shrink whose taps skip rows)
			if window {
				b0 = keep // nothing computed is needed any more
			}
		}
		for next < upTo {
			// Room for two rows; else move rows keep..next-1 to the top.
			if window && next+2-b0 > B && keep > b0 {
				copy(tmp, tmp[(keep-b0)*rw:(next-b0)*rw])
				b0 = keep
			}
			r := next
			row := src[r*stride:]
			t := tmp[(r-b0)*rw : (r-b0+1)*rw]
			if fixed {
				if r+1 < hi && r+2-b0 <= B {
					// Two rows per coefficient load (the second may run one row ahead).
					rb, tb := src[(r+1)*stride:], tmp[(r+1-b0)*rw:(r+2-b0)*rw]
					if hp == nil || !hp.rows2(row, rb, t, tb) {
						horizontal2(row, rb, t, tb, fx)
					}
					next += 2
					continue
				}
				horizontal1(row, t, fx)
				next++
				continue
			}
			for j := range ow {
				s0, n := cx.start[j], cx.count[j]
				w := cx.w[j*cx.k : j*cx.k+n]
				px := row[s0*c : (s0+n)*c]
				for ch := 0; ch < c; ch++ {
					var s float32
					for k, wk := range w {
						s += float32(wk * float32(px[k*c+ch]))
					}
					t[j*c+ch] = s
				}
			}
			next++
		}
	}
	for i := range oh {
		s0, n := cy.start[i], cy.count[i]
		compute(s0, s0+n)
		w := cy.w[i*cy.k : i*cy.k+n]
		d := dst[i*dstStride : i*dstStride+rw]
		vsum(d, tmp[(s0-b0)*rw:], rw, w)
		if rowFn != nil {
			rowFn(i, d)
		}
	}
}

func round8(v float32) uint8 {
	i := int32(v + 0.5) // truncation: (-1, 0) rounds to 0 as well
	if uint32(i) > 255 {
		if i < 0 {
			return 0
		}
		return 255
	}
	return uint8(i)
}

// horizontal1 is the single-channel horizontal pass with a constant tap count.
func horizontal1(row []byte, t []float32, c coeffs) {
	k := c.k
	switch k {
	case 2:
		for j := range t {
			s := c.start[j]
			px := row[s : s+2]
			w := c.w[j*2 : j*2+2]
			t[j] = float32(w[0]*float32(px[0])) + float32(w[1]*float32(px[1]))
		}
	case 4:
		for j := range t {
			s := c.start[j]
			px := row[s : s+4]
			w := c.w[j*4 : j*4+4]
			t[j] = float32(w[0]*float32(px[0])) + float32(w[1]*float32(px[1])) + float32(w[2]*float32(px[2])) + float32(w[3]*float32(px[3]))
		}
	case 3:
		for j := range t {
			s := c.start[j]
			px := row[s : s+3]
			w := c.w[j*3 : j*3+3]
			t[j] = float32(w[0]*float32(px[0])) + float32(w[1]*float32(px[1])) + float32(w[2]*float32(px[2]))
		}
	case 5:
		for j := range t {
			s := c.start[j]
			px := row[s : s+5]
			w := c.w[j*5 : j*5+5]
			t[j] = float32(w[0]*float32(px[0])) + float32(w[1]*float32(px[1])) + float32(w[2]*float32(px[2])) + float32(w[3]*float32(px[3])) + float32(w[4]*float32(px[4]))
		}
	default:
		for j := range t {
			s := c.start[j]
			px := row[s : s+k]
			w := c.w[j*k : j*k+k]
			var sum float32
			for i, wi := range w {
				sum += float32(wi * float32(px[i]))
			}
			t[j] = sum
		}
	}
}

// horizontal2 is horizontal1 over two rows sharing each output's coefficients.
func horizontal2(ra, rb []byte, ta, tb []float32, c coeffs) {
	k := c.k
	tb = tb[:len(ta)]
	switch k {
	case 2:
		for j := range ta {
			s := c.start[j]
			pa, pb := ra[s:s+2], rb[s:s+2]
			w := c.w[j*2 : j*2+2]
			w0, w1 := w[0], w[1]
			ta[j] = float32(w0*float32(pa[0])) + float32(w1*float32(pa[1]))
			tb[j] = float32(w0*float32(pb[0])) + float32(w1*float32(pb[1]))
		}
	case 5:
		for j := range ta {
			s := c.start[j]
			pa, pb := ra[s:s+5], rb[s:s+5]
			w := c.w[j*5 : j*5+5]
			w0, w1, w2, w3, w4 := w[0], w[1], w[2], w[3], w[4]
			ta[j] = float32(w0*float32(pa[0])) + float32(w1*float32(pa[1])) + float32(w2*float32(pa[2])) + float32(w3*float32(pa[3])) + float32(w4*float32(pa[4]))
			tb[j] = float32(w0*float32(pb[0])) + float32(w1*float32(pb[1])) + float32(w2*float32(pb[2])) + float32(w3*float32(pb[3])) + float32(w4*float32(pb[4]))
		}
	case 3:
		for j := range ta {
			s := c.start[j]
			pa, pb := ra[s:s+3], rb[s:s+3]
			w := c.w[j*3 : j*3+3]
			w0, w1, w2 := w[0], w[1], w[2]
			ta[j] = float32(w0*float32(pa[0])) + float32(w1*float32(pa[1])) + float32(w2*float32(pa[2]))
			tb[j] = float32(w0*float32(pb[0])) + float32(w1*float32(pb[1])) + float32(w2*float32(pb[2]))
		}
	case 4:
		for j := range ta {
			s := c.start[j]
			pa, pb := ra[s:s+4], rb[s:s+4]
			w := c.w[j*4 : j*4+4]
			w0, w1, w2, w3 := w[0], w[1], w[2], w[3]
			ta[j] = float32(w0*float32(pa[0])) + float32(w1*float32(pa[1])) + float32(w2*float32(pa[2])) + float32(w3*float32(pa[3]))
			tb[j] = float32(w0*float32(pb[0])) + float32(w1*float32(pb[1])) + float32(w2*float32(pb[2])) + float32(w3*float32(pb[3]))
		}
	default:
		horizontal1(ra, ta, c)
		horizontal1(rb, tb, c)
	}
}

// vsumGo is the portable vertical pass (reference for vsum).
func vsumGo(d []byte, src []float32, stride int, w []float32) {
	for x := range d {
		var s float32
		for t, wt := range w {
			s += float32(wt * src[t*stride+x])
		}
		d[x] = round8(s)
	}
}
