package image

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestVsumMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 3, 4, 5, 7} {
		for _, n := range []int{1, 3, 4, 5, 224, 227} {
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
