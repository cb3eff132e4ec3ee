package image

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func TestVsumMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 3, 4, 5, 7, 8} {
		for _, n := range []int{1, 3, 4, 5, 16, 20, 31, 32, 33, 39, 64, 100, 224, 227} {
			stride := n + 3
			src := make([]float32, k*stride)
			for i := range src {
				src[i] = r.Float32()*400 - 70
			}
			w := make([]float32, k)
			for i := range w {
				w[i] = r.Float32()
			}
			for _, avx := range avxModes() {
				setAVX2(avx)
				a, b := make([]byte, n), make([]byte, n)
				vsum(a, src, stride, w)
				vsumGo(b, src, stride, w)
				if !bytes.Equal(a, b) {
					t.Fatalf("k=%d n=%d avx2=%v: %v vs %v", k, n, avx, a, b)
				}
			}
			setAVX2(defaultAVX2)
		}
	}
}

// TestHpassMatchesGo checks the SIMD horizontal pass against horizontal2 (bit for bit)
// for every tap count it takes, flipped and unflipped axes, and short rows.
func TestHpassMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	row := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	tested, avxTested := 0, 0
	for _, f := range []Filter{FilterBilinear, FilterBicubic, FilterBox} {
		for _, inW := range []int{7, 40, 111, 224, 333, 500, 1000} {
			for _, outW := range []int{1, 4, 5, 97, 224} {
				for _, flip := range []bool{false, true} {
					x0 := r.Float64() * float64(inW) / 4
					x1 := float64(inW) - r.Float64()*float64(inW)/4
					c := makeCoeffs(inW, x0, x1, outW, f).window(0, outW, flip)
					fx, ok := c.fixedTaps(inW)
					if !ok {
						continue
					}
					ra, rb := row(inW+8), row(inW+8)
					ga, gb := make([]float32, outW), make([]float32, outW)
					horizontal2(ra, rb, ga, gb, fx)
					for _, avx := range avxModes() {
						setAVX2(avx)
						h, ok := newHpass(fx, inW, nil)
						if !ok {
							continue
						}
						ta, tb := make([]float32, outW), make([]float32, outW)
						if !h.rows2(ra, rb, ta, tb) {
							t.Fatalf("f=%d in=%d out=%d avx2=%v: not run", f, inW, outW, h.avx)
						}
						for j := range ta {
							if math.Float32bits(ta[j]) != math.Float32bits(ga[j]) || math.Float32bits(tb[j]) != math.Float32bits(gb[j]) {
								t.Fatalf("f=%d in=%d out=%d flip=%v k=%d avx2=%v: output %d: %v %v vs %v %v", f, inW, outW, flip, fx.k, h.avx, j, ta[j], tb[j], ga[j], gb[j])
							}
						}
						tested++
						if h.avx {
							avxTested++
						}
						if h.rows2(ra[:h.rowLen()-1], rb, ta, tb) {
							t.Fatalf("short row accepted")
						}
					}
					setAVX2(defaultAVX2)
				}
			}
		}
	}
	if !haveVsum {
		return
	}
	if tested < 50 {
		t.Fatalf("only %d cases", tested)
	}
	if defaultAVX2 && avxTested < 50 {
		t.Fatalf("only %d AVX2 cases", avxTested)
	}
	t.Logf("%d cases, %d with AVX2", tested, avxTested)
}

// TestYccIndexMatchesGo checks the SIMD colour indices against the Go tables for every
// (Y, Cb, Cr), with lengths that leave a tail for the Go loop.
func TestYccIndexMatchesGo(t *testing.T) {
	const n = 256*256 + 5
	y, cb, cr := make([]byte, n), make([]byte, n), make([]byte, n)
	a, b := make([]uint16, 3*n), make([]uint16, 3*n)
	for Y := range 256 {
		for i := range n {
			y[i], cb[i], cr[i] = byte(Y), byte(i), byte(i>>8)
		}
		yccIndex(y, cb, cr, a[:n], a[n:2*n], a[2*n:])
		yccIndexGo(y, cb, cr, b[:n], b[n:2*n], b[2*n:])
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("Y=%d pixel %d channel %d: %d, want %d", Y, i%n, i/n, a[i], b[i])
			}
		}
	}
}

// TestLutRowMatchesGo checks the unrolled table lookups against the table, with tails.
func TestLutRowMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var lut [256]float32
	for i := range lut {
		lut[i] = r.Float32()*10 - 5
	}
	for _, n := range []int{0, 1, 7, 8, 9, 63, 224, 231} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.IntN(256))
		}
		for _, avx := range avxModes() {
			setAVX2(avx)
			dst := make([]float32, n+3)
			lutRow(dst, src, &lut)
			for x, v := range src {
				if math.Float32bits(dst[x]) != math.Float32bits(lut[v]) {
					t.Fatalf("n=%d avx2=%v: %d: %v, want %v", n, avx, x, dst[x], lut[v])
				}
			}
			if dst[n] != 0 {
				t.Fatalf("n=%d: wrote past the row", n)
			}
		}
		setAVX2(defaultAVX2)
	}
}
