package image

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkApplyPlanarLUTRows is the fused pass of the bench-xform pipeline alone: a
// 500x375 4:2:0 picture, a 320x240 crop resized to 224x224 and flipped, float output.
func BenchmarkApplyPlanarLUTRows(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	p := &Planar{Width: 500, Height: 375, YStride: 512, CStride: 256, Log2ChromaW: 1, Log2ChromaH: 1, FullRange: true}
	p.Y, p.Cb, p.Cr = make([]byte, 512*375), make([]byte, 256*188), make([]byte, 256*188)
	for _, s := range [][]byte{p.Y, p.Cb, p.Cr} {
		for i := range s {
			s[i] = byte(r.IntN(256))
		}
	}
	var lut [3][256]float32
	for c := range lut {
		for i := range lut[c] {
			lut[c][i] = (float32(i)/255 - 0.45) / 0.225
		}
	}
	out := make([]float32, 3*224*224)
	dst := func(y int) (r, g, b []float32) {
		return out[y*224 : (y+1)*224], out[(224+y)*224 : (225+y)*224], out[(448+y)*224 : (449+y)*224]
	}
	plan := Identity(500, 375)
	plan.Crop(90, 70, 320, 240)
	plan.Resize(224, 224, FilterBilinear)
	plan.Flip()
	b.ReportAllocs()
	for b.Loop() {
		plan.ApplyPlanarLUTRows(p, lut[:], dst)
	}
}

// BenchmarkHorizontal2 times one pair of rows of the horizontal pass (500 -> 224 columns,
// the bench-xform luma case), Go loop and SIMD, in the same run.
func BenchmarkHorizontal2(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	ra, rb := make([]byte, 512), make([]byte, 512)
	for i := range ra {
		ra[i], rb[i] = byte(r.IntN(256)), byte(r.IntN(256))
	}
	for _, inW := range []int{160, 320, 500} {
		c, _ := makeCoeffs(500, 0, float64(inW), 224, FilterBilinear).window(0, 224, true).fixedTaps(500)
		h, simd := newHpass(c, 500, nil)
		ta, tb := make([]float32, 224), make([]float32, 224)
		b.Run(fmt.Sprintf("go/k=%d", c.k), func(b *testing.B) {
			for b.Loop() {
				horizontal2(ra, rb, ta, tb, c)
			}
		})
		b.Run(fmt.Sprintf("simd/k=%d", c.k), func(b *testing.B) {
			if !simd {
				b.Skip("no SIMD pass")
			}
			for b.Loop() {
				h.rows2(ra, rb, ta, tb)
			}
		})
	}
}
