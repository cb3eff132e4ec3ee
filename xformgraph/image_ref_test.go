package xformgraph

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Reference tests against Pillow. make test sets NEWTRICKS_XFORM_MEDIA (the media root
// that make xform-media fills; images under images/) and NEWTRICKS_PYTHON (the venv
// python with pillow and numpy that make xform-pyenv builds).

func mediaDir(t testing.TB) string {
	t.Helper()
	d := os.Getenv("NEWTRICKS_XFORM_MEDIA")
	if d == "" {
		t.Skip("NEWTRICKS_XFORM_MEDIA not set: run `make xform-media` and export NEWTRICKS_XFORM_MEDIA=xformgraph/testdata/media")
	}
	d = filepath.Join(d, "images")
	if _, err := os.Stat(filepath.Join(d, "photo_q90_420.jpg")); err != nil {
		t.Skipf("image media missing in %s: run `make xform-media`", d)
	}
	return d
}

func pythonBin(t testing.TB) string {
	t.Helper()
	p := os.Getenv("NEWTRICKS_PYTHON")
	if p == "" {
		t.Skip("NEWTRICKS_PYTHON not set: run `make xform-pyenv` and export NEWTRICKS_PYTHON=$HOME/.cache/newtricks/venv-test/bin/python")
	}
	return p
}

// pillow runs testdata/pillow_ref.py and parses its "W H C\n" + pixels answer.
func pillow(t *testing.T, args ...string) *Image {
	t.Helper()
	py := pythonBin(t)
	cmd := exec.Command(py, append([]string{"testdata/pillow_ref.py"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pillow_ref %v: %v\n%s", args, err, stderr.String())
	}
	nl := bytes.IndexByte(out, '\n')
	var w, h, c int
	if _, err := fmt.Sscanf(string(out[:nl]), "%d %d %d", &w, &h, &c); err != nil {
		t.Fatalf("pillow_ref header %q", out[:nl])
	}
	m := NewImage(w, h, c)
	copy(m.Pix, out[nl+1:])
	return m
}

func runImage(t *testing.T, path string, nodes string) *Image {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	js := fmt.Sprintf(`{"version":1,"seed":"1","nodes":[{"id":"dec","op":"decode_image","input":"input"}%s],"outputs":["out"]}`, nodes)
	g := mustCompile(t, js)
	o, err := g.Run(context.Background(), Sample{Key: filepath.Base(path), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return o.Values[0].Image
}

func compareImages(t *testing.T, got, want *Image) (mad, psnr float64) {
	t.Helper()
	if got.Width != want.Width || got.Height != want.Height || got.Channels != want.Channels {
		t.Fatalf("size %dx%dx%d, Pillow %dx%dx%d", got.Width, got.Height, got.Channels, want.Width, want.Height, want.Channels)
	}
	var sad, sse float64
	n := 0
	for y := 0; y < got.Height; y++ {
		a, b := got.Row(y), want.Row(y)
		for i := range a {
			d := float64(a[i]) - float64(b[i])
			sad += math.Abs(d)
			sse += d * d
			n++
		}
	}
	mad = sad / float64(n)
	psnr = math.Inf(1)
	if sse > 0 {
		psnr = 10 * math.Log10(255*255/(sse/float64(n)))
	}
	return
}

func TestDecodeMatchesPillow(t *testing.T) {
	dir := mediaDir(t)
	pythonBin(t)
	for _, f := range []string{
		"photo_q90_420.jpg", "baseline_444.jpg", "baseline_422.jpg", "progressive.jpg", "gray.jpg",
		"cmyk.jpg", "odd_333x251.jpg", "ffmpeg_420.jpg", "exif_orient6.jpg",
		"rgb8.png", "rgba8.png", "rgb16.png", "rgba16.png", "gray8.png", "palette.png",
		"lossy.webp", "lossless.webp", "lossy_alpha.webp",
	} {
		t.Run(f, func(t *testing.T) {
			p := filepath.Join(dir, f)
			dec := runDecodeOnly(t, p)
			want := pillow(t, "decode", p)
			mad, psnr := compareImages(t, dec, want)
			t.Logf("%s: MAD %.3f PSNR %.1f dB", f, mad, psnr)
			if mad > 1 {
				t.Errorf("%s: mean absolute difference %.3f > 1", f, mad)
			}
		})
	}
}

func runDecodeOnly(t *testing.T, path string) *Image {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g := mustCompile(t, `{"version":1,"nodes":[{"id":"out","op":"decode_image","input":"input"}],"outputs":["out"]}`)
	o, err := g.Run(context.Background(), Sample{Key: filepath.Base(path), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return o.Values[0].Image
}

func TestResizeMatchesPillow(t *testing.T) {
	dir := mediaDir(t)
	pythonBin(t)
	for _, tc := range []struct {
		file, filter       string
		x, y, w, h, ow, oh int
		flip               bool
	}{
		{"photo_q90_420.jpg", "bilinear", 0, 0, 500, 375, 224, 224, false},
		{"photo_q90_420.jpg", "bilinear", 37, 21, 301, 240, 224, 224, true},
		{"photo_q90_420.jpg", "bilinear", 100, 80, 90, 120, 224, 224, false}, // upscale
		{"photo_q90_420.jpg", "bicubic", 11, 3, 400, 300, 256, 192, false},
		{"photo_q90_420.jpg", "area", 0, 0, 500, 375, 125, 94, true},
		{"baseline_422.jpg", "bilinear", 51, 0, 333, 375, 224, 224, false},
		{"gray.jpg", "bilinear", 5, 5, 300, 200, 160, 160, false},
		{"rgb8.png", "bilinear", 37, 21, 301, 240, 224, 224, true},
		{"rgb8.png", "bicubic", 0, 0, 500, 375, 333, 250, false},
		{"lossy.webp", "area", 0, 0, 500, 375, 100, 75, false},
		{"odd_333x251.jpg", "bilinear", 1, 1, 331, 249, 224, 224, false},
	} {
		name := fmt.Sprintf("%s/%s/%d,%d,%dx%d->%dx%d", tc.file, tc.filter, tc.x, tc.y, tc.w, tc.h, tc.ow, tc.oh)
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, tc.file)
			got := runCropResize(t, p, tc.x, tc.y, tc.w, tc.h, tc.ow, tc.oh, tc.filter, tc.flip)
			f := "0"
			if tc.flip {
				f = "1"
			}
			want := pillow(t, "resize", p, fmt.Sprint(tc.ow), fmt.Sprint(tc.oh), tc.filter,
				fmt.Sprint(tc.x), fmt.Sprint(tc.y), fmt.Sprint(tc.x+tc.w), fmt.Sprint(tc.y+tc.h), f)
			mad, psnr := compareImages(t, got, want)
			t.Logf("MAD %.3f PSNR %.1f dB", mad, psnr)
			if psnr < 35 {
				t.Errorf("PSNR %.1f dB < 35 vs Pillow", psnr)
			}
		})
	}
}

// runCropResize runs decode -> crop -> resize [-> hflip], which the runner fuses into one
// pass (from YCbCr planes for JPEG).
func runCropResize(t *testing.T, p string, x, y, w, h, ow, oh int, filter string, flip bool) *Image {
	last := "out"
	if flip {
		last = "r"
	}
	nodes := fmt.Sprintf(`,{"id":"c","op":"crop","input":"dec","params":{"x":%d,"y":%d,"width":%d,"height":%d}},`+
		`{"id":%q,"op":"resize","input":"c","params":{"size":[%d,%d],"filter":%q}}`, x, y, w, h, last, oh, ow, filter)
	if flip {
		nodes += `,{"id":"out","op":"hflip","input":"r"}`
	}
	return runImage(t, p, nodes)
}
