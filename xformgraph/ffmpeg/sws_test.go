package ffmpeg

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestPortableConversionMatchesSwscale: the portable same-size YUV->RGB24 conversion gives
// the bytes of libswscale's default conversion, which on x86-64 is the MMX/SSSE3 special
// converter (the one the ffmpeg CLI, decord and PyAV run), for random pictures (every
// sample value, so every clipping case), every format it takes, odd widths, limited and full
// range (by color_range and by the yuvj formats), and every AVColorSpace value, including
// those the scale filter maps to BT.601. On other architectures swscale's default there is
// other code (NEON, or the C tables), so the comparison needs amd64.
func TestPortableConversionMatchesSwscale(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the reference is libswscale's x86 converter")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	formats := []struct {
		name string
		pf   PixelFormat
	}{{"yuv420p", PixFmtYUV420P}, {"yuvj420p", 12}, {"yuva420p", 33}, {"yuv422p", 4}, {"yuvj422p", 13}}
	for _, f := range formats {
		if got := f.pf.String(); got != f.name {
			t.Fatalf("pixel format %d is %s, want %s", f.pf, got, f.name)
		}
		for _, sz := range [][2]int{{2, 2}, {17, 6}, {170, 4}, {176, 144}, {321, 240}, {642, 10}} {
			for cs := 0; cs <= 14; cs++ {
				for _, cr := range []int{0, 1, 2} { // unspecified, MPEG (limited), JPEG (full)
					w, h := sz[0], sz[1]
					name := fmt.Sprintf("%s/%dx%d/cs%d/range%d", f.name, w, h, cs, cr)
					fr, err := newFilledFrame(w, h, f.pf, cs, cr, func(_ int, b []byte) {
						for i := range b {
							b[i] = byte(rng.Uint32())
						}
					})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !PortableConversion(w, h, f.pf, w, h, PixFmtRGB24, ScaleBilinear) {
						t.Fatalf("%s: not a portable conversion", name)
					}
					s, err := NewSwsContext(w, h, f.pf, w, h, PixFmtRGB24, ScaleBilinear)
					if err != nil {
						t.Fatal(err)
					}
					a, _ := NewImage(w, h, PixFmtRGB24)
					if err := s.ScaleFrame(fr, a); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					pb, err := defaultSwscale(fr)
					if err != nil {
						t.Fatalf("%s: swscale: %v", name, err)
					}
					pa := make([]byte, a.Len())
					a.Copy(pa)
					if !bytes.Equal(pa, pb) {
						for i := range pa {
							if pa[i] != pb[i] {
								t.Errorf("%s: byte %d (pixel %d,%d) %d, swscale %d", name, i, i/3%w, i/3/w, pa[i], pb[i])
								break
							}
						}
					}
					s.Free()
					a.Free()
					fr.Free()
				}
			}
		}
	}
	// Odd heights, 10-bit and 4:4:4 stay with swscale's scaler.
	for _, c := range []struct {
		w, h int
		pf   PixelFormat
	}{{176, 145, PixFmtYUV420P}, {176, 144, PixFmtYUV420P10LE}, {176, 144, 5}} {
		if PortableConversion(c.w, c.h, c.pf, c.w, c.h, PixFmtRGB24, ScaleBilinear) {
			t.Errorf("%s %dx%d taken by the portable conversion", c.pf, c.w, c.h)
		}
	}
	if PortableConversion(176, 144, PixFmtYUV420P, 88, 72, PixFmtRGB24, ScaleBilinear) ||
		PortableConversion(176, 144, PixFmtYUV420P, 176, 144, PixFmtRGB24, ScaleBilinear|ScaleAccurateRound) {
		t.Error("a resize or an accurate-rounding request taken by the portable conversion")
	}
}

// BenchmarkPortableConversion720p times the portable conversion of a 1280x720 yuv420p
// picture (compare BenchmarkSwscaleDefault720p, libswscale's SIMD converter on this CPU).
func BenchmarkPortableConversion720p(b *testing.B) {
	fr, err := newFilledFrame(1280, 720, PixFmtYUV420P, 2, 1, func(_ int, p []byte) {
		for i := range p {
			p[i] = byte(i * 7)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer fr.Free()
	s, _ := NewSwsContext(1280, 720, PixFmtYUV420P, 1280, 720, PixFmtRGB24, ScaleBilinear)
	img, _ := NewImage(1280, 720, PixFmtRGB24)
	defer img.Free()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.ScaleFrame(fr, img); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSwscaleDefault720p(b *testing.B) {
	fr, err := newFilledFrame(1280, 720, PixFmtYUV420P, 2, 1, func(_ int, p []byte) {
		for i := range p {
			p[i] = byte(i * 7)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer fr.Free()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := defaultSwscale(fr); err != nil {
			b.Fatal(err)
		}
	}
}
