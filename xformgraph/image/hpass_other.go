//go:build !amd64

package image

type hpass struct {
	maxStart int
	avx      bool
}

func AVX2() bool { return false }

func newHpass(c coeffs, srcW int, buf *hpass) (*hpass, bool) { return nil, false }
func (h *hpass) rows2(ra, rb []byte, ta, tb []float32) bool  { return false }
func (h *hpass) rowLen() int                                 { return 0 }

func setAVX2(on bool) {}
