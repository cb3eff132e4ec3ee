package image

import (
	"fmt"
	"testing"
)

// BenchmarkLutRow times one 224-sample row through a float table, SSE2/Go and AVX2.
func BenchmarkLutRow(b *testing.B) {
	var lut [256]float32
	for i := range lut {
		lut[i] = float32(i) / 3
	}
	src := make([]byte, 224)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]float32, 224)
	for _, avx := range avxModes() {
		b.Run(fmt.Sprintf("avx2=%v", avx), func(b *testing.B) {
			setAVX2(avx)
			defer setAVX2(defaultAVX2)
			for b.Loop() {
				lutRow(dst, src, &lut)
			}
		})
	}
}
