package image

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func randImage(w, h, c int, seed uint64) *Image {
	r := rand.New(rand.NewPCG(seed, 1))
	m := NewImage(w, h, c)
	for i := range m.Pix {
		m.Pix[i] = uint8(r.Uint32())
	}
	return m
}

// Crops and flips composed in a Plan equal applying them one by one.
func TestPlanComposesCropsAndFlips(t *testing.T) {
	m := randImage(37, 29, 3, 1)
	p := Identity(37, 29)
	if err := p.Crop(3, 2, 30, 25); err != nil {
		t.Fatal(err)
	}
	p.Flip()
	if err := p.Crop(4, 5, 20, 11); err != nil {
		t.Fatal(err)
	}
	got := p.Apply(m)
	want := Crop(FlipH(Crop(m, 3, 2, 30, 25)), 4, 5, 20, 11)
	if !bytes.Equal(got.Pix, want.Pix) {
		t.Fatal("plan differs from sequential crop/flip/crop")
	}
}

// A resize to the same size is the identity; coefficients are normalized.
func TestCoeffs(t *testing.T) {
	for _, f := range []Filter{FilterBilinear, FilterBicubic, FilterBox} {
		c := makeCoeffs(100, 10, 90, 33, f)
		for i := range c.start {
			var s float64
			for k := 0; k < c.count[i]; k++ {
				s += float64(c.w[i*c.k+k])
			}
			if math.Abs(s-1) > 1e-5 || c.start[i] < 10 || c.start[i]+c.count[i] > 90 {
				t.Fatalf("filter %d out %d: sum %v start %d count %d", f, i, s, c.start[i], c.count[i])
			}
		}
	}
	m := randImage(20, 10, 1, 2)
	p := Identity(20, 10)
	p.Resize(20, 10, FilterBicubic)
	if got := p.Apply(m); !bytes.Equal(got.Pix, m.Pix) {
		t.Fatal("same-size resize changed pixels")
	}
}

func TestOrientInverse(t *testing.T) {
	m := randImage(7, 5, 3, 3)
	// 6 (rotate CW) then 8 (rotate CCW) is the identity; 2, 3, 4, 5, 7 are involutions.
	if !bytes.Equal(Orient(Orient(m, 6), 8).Pix, m.Pix) {
		t.Fatal("6 then 8")
	}
	for _, o := range []int{2, 3, 4, 5, 7} {
		if !bytes.Equal(Orient(Orient(m, o), o).Pix, m.Pix) {
			t.Fatalf("orientation %d twice", o)
		}
	}
	if r := Orient(m, 6); r.Width != 5 || r.Height != 7 {
		t.Fatal("rotation size")
	}
}

func TestProbe(t *testing.T) {
	exif := []byte("\xff\xd8\xff\xe1\x00\x22Exif\x00\x00II\x2a\x00\x08\x00\x00\x00\x01\x00\x12\x01\x03\x00\x01\x00\x00\x00\x06\x00\x00\x00\x00\x00\x00\x00" +
		"\xff\xc2\x00\x11\x08\x01\x77\x01\xf4\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01")
	info, err := Probe(exif)
	if err != nil || info.Width != 500 || info.Height != 375 || info.Orientation != 6 || !info.Progressive || info.Components != 3 {
		t.Fatalf("%+v %v", info, err)
	}
	if _, err := ProbeLimited(exif, 1000); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("limit: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("\xff\xd8"), []byte("\xff\xd8\xff\xc0\x00\x11\x08\x00\x00\x01\xf4\x03"), []byte("GIF89a")} {
		if _, err := Probe(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}
