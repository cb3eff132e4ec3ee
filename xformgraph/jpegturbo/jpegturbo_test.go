package jpegturbo

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// inputs are the committed golden inputs (xformgraph/golden/testdata/inputs).
func inputs(t *testing.T) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, n := range []string{"photo_420.jpg", "small_422.jpg", "small_444.jpg", "small_progressive.jpg", "small_gray.jpg", "exif_orient6.jpg", "ffmpeg_420.jpg", "small_cmyk.jpg"} {
		b, err := os.ReadFile(filepath.Join("..", "golden", "testdata", "inputs", n))
		if err != nil {
			t.Fatal(err)
		}
		m[n] = b
	}
	return m
}

// TestRegionEqualsFullDecode: a region decode gives the pixels of the full decode (at the
// same scale), apart from the columns next to a cut edge, for random regions.
func TestRegionEqualsFullDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for name, data := range inputs(t) {
		out := RGB
		switch name {
		case "small_gray.jpg":
			out = Gray
		case "small_cmyk.jpg":
			out = CMYK
		}
		for _, denom := range []int{1, 2, 4, 8} {
			full, err := Decode(data, Request{Out: out, Denom: denom}, nil)
			if err != nil {
				t.Fatalf("%s 1/%d: %v", name, denom, err)
			}
			if full.X0 != 0 || full.W != full.ScaledW || full.H != full.ScaledH {
				t.Fatalf("%s: full decode region %+v", name, full)
			}
			if sw, sh := ScaledSize(full.Width, full.Height, denom); sw != full.ScaledW || sh != full.ScaledH {
				t.Fatalf("%s 1/%d: scaled %dx%d, ScaledSize %dx%d", name, denom, full.ScaledW, full.ScaledH, sw, sh)
			}
			bpp := 1
			if out == CMYK {
				bpp = 4
			}
			for range 12 {
				W, H := full.ScaledW, full.ScaledH
				x0, y0 := rng.IntN(W), rng.IntN(H)
				x1, y1 := x0+1+rng.IntN(W-x0), y0+1+rng.IntN(H-y0)
				reg, err := Decode(data, Request{Out: out, Denom: denom, X0: x0, Y0: y0, X1: x1, Y1: y1}, nil)
				if err != nil {
					t.Fatalf("%s 1/%d region (%d,%d)-(%d,%d): %v", name, denom, x0, y0, x1, y1, err)
				}
				if reg.X0 > x0 || reg.X0+reg.W != x1 || reg.Y0 != y0 || reg.H != y1-y0 {
					t.Fatalf("%s: asked (%d,%d)-(%d,%d), got %d,%d %dx%d", name, x0, y0, x1, y1, reg.X0, reg.Y0, reg.W, reg.H)
				}
				// Columns that may differ: two next to a cut left or right edge.
				lo, hi := reg.X0, reg.X0+reg.W
				if lo > 0 {
					lo += 2
				}
				if hi < W {
					hi -= 2
				}
				for p := range reg.Planes {
					for y := 0; y < reg.H && lo < hi; y++ {
						got := reg.Planes[p][(y*reg.W+lo-reg.X0)*bpp : (y*reg.W+hi-reg.X0)*bpp]
						want := full.Planes[p][((y0+y)*W+lo)*bpp : ((y0+y)*W+hi)*bpp]
						if !bytes.Equal(got, want) {
							t.Fatalf("%s 1/%d region (%d,%d)-(%d,%d) plane %d row %d differs from the full decode", name, denom, x0, y0, x1, y1, p, y0+y)
						}
					}
				}
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	data := inputs(t)["photo_420.jpg"]
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"garbage", []byte("not a jpeg at all, really"), ErrFormat},
		{"header only", data[:600], ErrTruncated},
		{"truncated", data[:len(data)/2], ErrTruncated},
	} {
		if _, err := Decode(tc.b, Request{Out: RGB}, nil); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// Damage in the entropy-coded data: an error whenever the damaged rows are decoded.
	bad := append([]byte(nil), data...)
	for i := len(bad) / 2; i < len(bad)/2+64; i++ {
		bad[i] = 0xFF ^ byte(i)
	}
	if _, err := Decode(bad, Request{Out: RGB}, nil); !errors.Is(err, ErrFormat) {
		t.Errorf("damaged data: %v", err)
	}
	// The rows above the damage alone decode.
	if _, err := Decode(bad, Request{Out: RGB, X0: 0, Y0: 0, X1: 500, Y1: 16}, nil); err != nil {
		t.Errorf("rows above the damage: %v", err)
	}
	if _, err := Decode(data, Request{Out: RGB, MaxPixels: 1000}, nil); !errors.Is(err, ErrLimit) {
		t.Errorf("pixel limit: %v", err)
	}
	if _, err := Decode(data, Request{Out: RGB, X0: 10, Y0: 0, X1: 501, Y1: 5}, nil); !errors.Is(err, ErrArg) {
		t.Errorf("region outside: %v", err)
	}
	if _, err := Decode(data, Request{Out: RGB, Denom: 3}, nil); !errors.Is(err, ErrArg) {
		t.Errorf("scale 1/3: %v", err)
	}
	if _, err := Decode(data, Request{Out: CMYK}, nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("CMYK output of a YCbCr JPEG: %v", err)
	}
	if v := Version(); v == "" || v == "0.0.0" {
		t.Errorf("version %q", v)
	}
}

// FuzzDecode: any bytes and any request give pixels or an error, never a crash, a hang or
// a write outside the planes.
func FuzzDecode(f *testing.F) {
	for _, n := range []string{"small_444.jpg", "small_progressive.jpg", "small_gray.jpg", "small_cmyk.jpg"} {
		b, err := os.ReadFile(filepath.Join("..", "golden", "testdata", "inputs", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(1), uint8(0), uint16(3), uint16(5), uint16(200), uint16(100))
	}
	f.Fuzz(func(t *testing.T, data []byte, mode, denomLog uint8, x0, y0, x1, y1 uint16) {
		out := []Out{RGB, Gray, CMYK}[int(mode)%3]
		r := Request{Out: out, Denom: 1 << (denomLog % 4), MaxPixels: 1 << 22}
		if x1 > 0 {
			r.X0, r.Y0, r.X1, r.Y1 = int(x0), int(y0), int(x1), int(y1)
		}
		res, err := Decode(data, r, nil)
		if err != nil {
			return
		}
		bpp := 1
		if out == CMYK {
			bpp = 4
		}
		for _, p := range res.Planes {
			if len(p) != res.W*res.H*bpp {
				t.Fatalf("plane of %d bytes for %dx%d", len(p), res.W, res.H)
			}
		}
	})
}
