package image

// YCbCr -> RGB exactly as libjpeg-turbo (full range, 16-bit fixed point, "fancy"
// triangle chroma upsampling) and libwebp (limited range, 14-bit fixed point, same
// upsampler), so a decode matches Pillow's to within IDCT rounding.

const (
	scaleBits = 16
	oneHalf   = 1 << (scaleBits - 1)
)

func fix(x float64) int32 { return int32(float64(x*(1<<scaleBits)) + 0.5) }

// Tables built once; read-only.
var crR, cbB, crG, cbG [256]int32

func init() {
	for i := 0; i < 256; i++ {
		x := int32(i - 128)
		crR[i] = (fix(1.40200)*x + oneHalf) >> scaleBits
		cbB[i] = (fix(1.77200)*x + oneHalf) >> scaleBits
		crG[i] = -fix(0.71414) * x
		cbG[i] = -fix(0.34414)*x + oneHalf
	}
}

func clip8(v int32) byte {
	if uint32(v) > 255 {
		if v < 0 {
			return 0
		}
		return 255
	}
	return byte(v)
}

// yccToRGB converts one pixel.
func yccToRGB(y, cb, cr byte, full bool) (byte, byte, byte) {
	if full {
		Y := int32(y)
		return clip8(Y + crR[cr]), clip8(Y + ((cbG[cb] + crG[cr]) >> scaleBits)), clip8(Y + cbB[cb])
	}
	// libwebp VP8YuvToRgb.
	mh := func(v, c int32) int32 { return (v * c) >> 8 }
	c8 := func(v int32) byte {
		if v&^16383 == 0 {
			return byte(v >> 6)
		}
		if v < 0 {
			return 0
		}
		return 255
	}
	Y, U, V := int32(y), int32(cb), int32(cr)
	return c8(mh(Y, 19077) + mh(V, 26149) - 14234),
		c8(mh(Y, 19077) - mh(U, 6419) - mh(V, 13320) + 8708),
		c8(mh(Y, 19077) + mh(U, 33050) - 17685)
}

// upsampleRow fills cbRow/crRow (len w) with the chroma of luma row y using libjpeg's
// fancy upsampling for factors of 2 (triangle filter, (3*near+far) per axis) and
// replication otherwise.
func (p *Planar) upsampleRow(y int, cbRow, crRow []byte, tmpCb, tmpCr []int32) {
	cw, ch := p.ChromaSize()
	sh, sv := p.Log2ChromaW, p.Log2ChromaH
	// Vertical step into tmp (scaled by 4 when sv == 1, else by 1).
	vscale := int32(1)
	if sv == 1 {
		vscale = 4
		cy := y >> 1
		far := cy - 1
		if y&1 == 1 {
			far = cy + 1
		}
		far = max(0, min(far, ch-1))
		n1, f1 := p.Cb[cy*p.CStride:], p.Cb[far*p.CStride:]
		n2, f2 := p.Cr[cy*p.CStride:], p.Cr[far*p.CStride:]
		for i := 0; i < cw; i++ {
			tmpCb[i] = 3*int32(n1[i]) + int32(f1[i])
			tmpCr[i] = 3*int32(n2[i]) + int32(f2[i])
		}
	} else {
		cy := min(y>>sv, ch-1)
		r1, r2 := p.Cb[cy*p.CStride:], p.Cr[cy*p.CStride:]
		for i := 0; i < cw; i++ {
			tmpCb[i] = int32(r1[i])
			tmpCr[i] = int32(r2[i])
		}
	}
	w := p.Width
	switch {
	case sh == 1 && sv == 1:
		// h2v2: libjpeg rounding biases 8 and 7.
		for x := 0; x < w; x++ {
			c := x >> 1
			var f int
			var bias int32
			if x&1 == 0 {
				f, bias = max(c-1, 0), 8
			} else {
				f, bias = min(c+1, cw-1), 7
			}
			if cw == 1 {
				f = 0
			}
			cbRow[x] = byte((3*tmpCb[c] + tmpCb[f] + bias) >> 4)
			crRow[x] = byte((3*tmpCr[c] + tmpCr[f] + bias) >> 4)
		}
	case sh == 1:
		// h2v1 (vscale 1): biases 1 and 2 on a /4.
		for x := 0; x < w; x++ {
			c := x >> 1
			var f int
			var bias int32
			if x&1 == 0 {
				f, bias = max(c-1, 0), 1
			} else {
				f, bias = min(c+1, cw-1), 2
			}
			cbRow[x] = byte((3*tmpCb[c] + tmpCb[f] + bias) >> 2)
			crRow[x] = byte((3*tmpCr[c] + tmpCr[f] + bias) >> 2)
		}
	default:
		for x := 0; x < w; x++ {
			c := min(x>>sh, cw-1)
			if vscale == 4 {
				// h1v2: libjpeg-turbo rounds (v + 1 or 2) >> 2 alternating; use +2 ... the
				// difference is at most 1.
				cbRow[x] = byte((tmpCb[c] + 2) >> 2)
				crRow[x] = byte((tmpCr[c] + 2) >> 2)
			} else {
				cbRow[x] = byte(tmpCb[c])
				crRow[x] = byte(tmpCr[c])
			}
		}
	}
}

// ToImage converts p to an interleaved image with channels 1 (luma only), 3 (RGB) or 4
// (RGB, alpha 255).
func (p *Planar) ToImage(channels int) *Image {
	out := NewImage(p.Width, p.Height, channels)
	if p.RGB {
		for y := 0; y < p.Height; y++ {
			r := p.Y[y*p.YStride : y*p.YStride+p.Width]
			g := p.Cb[y*p.CStride : y*p.CStride+p.Width]
			b := p.Cr[y*p.CStride : y*p.CStride+p.Width]
			dst := out.Row(y)
			for x := range r {
				o := x * channels
				switch channels {
				case 1: // Pillow's convert("L"): ITU-R 601-2 luma
					dst[o] = uint8((uint32(r[x])*19595 + uint32(g[x])*38470 + uint32(b[x])*7471 + 0x8000) >> 16)
				case 3:
					dst[o], dst[o+1], dst[o+2] = r[x], g[x], b[x]
				default:
					dst[o], dst[o+1], dst[o+2], dst[o+3] = r[x], g[x], b[x], 255
				}
			}
		}
		return out
	}
	if channels == 1 || p.Gray() {
		for y := 0; y < p.Height; y++ {
			src := p.Y[y*p.YStride : y*p.YStride+p.Width]
			dst := out.Row(y)
			if channels == 1 {
				copy(dst, src)
				continue
			}
			for x, v := range src {
				if !p.FullRange {
					v = clip8((int32(v)-16)*255/219 + 0) // limited-range gray (rare)
				}
				o := x * channels
				dst[o], dst[o+1], dst[o+2] = v, v, v
				if channels == 4 {
					dst[o+3] = 255
				}
			}
		}
		return out
	}
	cw, _ := p.ChromaSize()
	cbRow, crRow := make([]byte, p.Width), make([]byte, p.Width)
	tCb, tCr := make([]int32, cw), make([]int32, cw)
	for y := 0; y < p.Height; y++ {
		p.upsampleRow(y, cbRow, crRow, tCb, tCr)
		src := p.Y[y*p.YStride : y*p.YStride+p.Width]
		dst := out.Row(y)
		for x, yy := range src {
			o := x * channels
			dst[o], dst[o+1], dst[o+2] = yccToRGB(yy, cbRow[x], crRow[x], p.FullRange)
			if channels == 4 {
				dst[o+3] = 255
			}
		}
	}
	return out
}

// yccIndexGo is the portable index computation of the fused colour pass (reference for
// yccIndex): 256 + the full-range R, G, B of each pixel before clamping, in [0, 767].
func yccIndexGo(y, cb, cr []byte, ri, gi, bi []uint16) {
	cb, cr, ri, gi, bi = cb[:len(y)], cr[:len(y)], ri[:len(y)], gi[:len(y)], bi[:len(y)]
	for x, yy := range y {
		Y := int32(yy) + 256
		c, r := cb[x], cr[x]
		ri[x] = uint16(Y + crR[r])
		gi[x] = uint16(Y + ((cbG[c] + crG[r]) >> scaleBits))
		bi[x] = uint16(Y + cbB[c])
	}
}
