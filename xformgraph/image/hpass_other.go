//go:build !amd64

package image

type hpass struct{}

func newHpass(c coeffs, wt []float32) (hpass, bool)         { return hpass{}, false }
func (h *hpass) rows2(ra, rb []byte, ta, tb []float32) bool { return false }
