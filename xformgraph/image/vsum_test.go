package image

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestVsumMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 3, 4, 5, 7} {
		for _, n := range []int{1, 3, 4, 5, 16, 20, 39, 224, 227} {
			stride := n + 3
			src := make([]float32, k*stride)
			for i := range src {
				src[i] = r.Float32()*400 - 70
			}
			w := make([]float32, k)
			for i := range w {
				w[i] = r.Float32()
			}
			a, b := make([]byte, n), make([]byte, n)
			vsum(a, src, stride, w)
			vsumGo(b, src, stride, w)
			if !bytes.Equal(a, b) {
				t.Fatalf("k=%d n=%d: %v vs %v", k, n, a, b)
			}
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
	tested := 0
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
					h, ok := newHpass(fx, nil)
					if !ok {
						continue
					}
					ra, rb := row(inW+8), row(inW+8)
					ta, tb := make([]float32, outW), make([]float32, outW)
					ga, gb := make([]float32, outW), make([]float32, outW)
					if !h.rows2(ra, rb, ta, tb) {
						t.Fatalf("f=%d in=%d out=%d: not run", f, inW, outW)
					}
					horizontal2(ra, rb, ga, gb, fx)
					for j := range ta {
						if ta[j] != ga[j] || tb[j] != gb[j] {
							t.Fatalf("f=%d in=%d out=%d flip=%v k=%d: output %d: %v %v vs %v %v", f, inW, outW, flip, fx.k, j, ta[j], tb[j], ga[j], gb[j])
						}
					}
					tested++
					if h.rows2(ra[:h.maxStart+7], rb, ta, tb) {
						t.Fatalf("short row accepted")
					}
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
