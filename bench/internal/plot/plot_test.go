package plot

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// TestWritePNG: the file is a PNG of the asked size and each series' colour is on it.
func TestWritePNG(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.png")
	ss := []Series{
		{Name: "a", Color: Palette[0], X: []float64{0, 1, 2}, Y: []float64{1, 3, 2}},
		{Name: "b", Color: Palette[1], X: []float64{0, 2}, Y: []float64{0.5, 0.5}},
	}
	if err := (Chart{Title: "t", XUnit: "s", YUnit: " ms", Width: 400, Height: 300, Marks: []Mark{{X: 1, Label: "m"}}}).WritePNG(p, ss); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 400 || b.Dy() != 300 {
		t.Fatalf("size %v", b)
	}
	for _, s := range ss {
		found := false
		for y := 0; y < 300 && !found; y++ {
			for x := 0; x < 400 && !found; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				found = uint8(r>>8) == s.Color.R && uint8(g>>8) == s.Color.G && uint8(b>>8) == s.Color.B
			}
		}
		if !found {
			t.Errorf("series %s's colour is not drawn", s.Name)
		}
	}
	if err := (Chart{}).WritePNG(p, []Series{{X: []float64{1}}}); err == nil {
		t.Error("mismatched x and y accepted")
	}
	if NiceStep(0.37) != 0.5 || NiceStep(7) != 10 || NiceStep(120) != 200 {
		t.Errorf("NiceStep: %v %v %v", NiceStep(0.37), NiceStep(7), NiceStep(120))
	}
}

// TestPointsMarkOnePoint: a series of one point is invisible as a line; with Points it is a
// square at its place (centred, since all its x are equal).
func TestPointsMarkOnePoint(t *testing.T) {
	ss := []Series{{Name: "one", Color: Palette[2], X: []float64{1}, Y: []float64{1}}}
	at := func(points bool) bool {
		p := filepath.Join(t.TempDir(), "p.png")
		if err := (Chart{Points: points}).WritePNG(p, ss); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		// 1000 x 480, plot area x 80..980, y 40..430, y range 0..1.05: the point is at (530, 59).
		r, g, b, _ := img.At(530, 59).RGBA()
		return uint8(r>>8) == Palette[2].R && uint8(g>>8) == Palette[2].G && uint8(b>>8) == Palette[2].B
	}
	if at(false) {
		t.Fatal("without Points the point is drawn")
	}
	if !at(true) {
		t.Fatal("with Points the point is not drawn at (530, 59)")
	}
}
