package xformgraph

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	ximage "github.com/newtricks/newtricks/xformgraph/image"
	"github.com/newtricks/newtricks/xformgraph/internal/testreq"
)

// Reference tests against Pillow. make test sets NEWTRICKS_XFORM_MEDIA (the media root
// that make xform-media fills; images under images/) and NEWTRICKS_PYTHON (the venv
// python with pillow and numpy that make xform-pyenv builds).

func mediaDir(t testing.TB) string {
	t.Helper()
	d := os.Getenv("NEWTRICKS_XFORM_MEDIA")
	if d == "" {
		testreq.Missing(t, "NEWTRICKS_XFORM_MEDIA not set: run `make xform-media` and export NEWTRICKS_XFORM_MEDIA=xformgraph/testdata/media")
	}
	d = filepath.Join(d, "images")
	if _, err := os.Stat(filepath.Join(d, "photo_q90_420.jpg")); err != nil {
		testreq.Missing(t, "image media missing in %s: run `make xform-media`", d)
	}
	return d
}

func pythonBin(t testing.TB) string {
	t.Helper()
	p := os.Getenv("NEWTRICKS_PYTHON")
	if p == "" {
		testreq.Missing(t, "NEWTRICKS_PYTHON not set: run `make xform-pyenv` and export NEWTRICKS_PYTHON=$HOME/.cache/newtricks/venv-test/bin/python")
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

// TestFusedPipelineMatchesTorchvision checks the fused training path (decode ->
// random_resized_crop 224 -> random_hflip -> normalize -> CHW float32, one pass from the
// decoder's planes) against torchvision's semantics computed by Pillow + numpy: the crop
// box and flip this graph drew, img.crop(box).resize((224, 224), BILINEAR), FLIP_LEFT_RIGHT,
// ToTensor, Normalize(ImageNet mean, std). Differences are measured in 8-bit levels
// (normalized difference * std * 255).
func TestFusedPipelineMatchesTorchvision(t *testing.T) {
	dir := mediaDir(t)
	py := pythonBin(t)
	const js = `{"version":1,"seed":"77","nodes":[
	  {"id":"dec","op":"decode_image","input":"input"},
	  {"id":"rrc","op":"random_resized_crop","input":"dec","params":{"size":[224]}},
	  {"id":"flip","op":"random_hflip","input":"rrc"},
	  {"id":"norm","op":"normalize","input":"flip","params":{"mean":[0.485,0.456,0.406],"std":[0.229,0.224,0.225]}},
	  {"id":"t","op":"to_tensor","input":"norm","params":{"layout":"CHW","dtype":"float32"}}],
	 "outputs":["t"]}`
	g := mustCompile(t, js)
	params := map[string]Params{}
	for _, n := range g.Nodes {
		params[n.ID] = n.Params
	}
	std := []float64{0.229, 0.224, 0.225}
	flips, scaled := 0, 0
	for _, file := range []string{"photo_q90_420.jpg", "baseline_444.jpg", "baseline_422.jpg", "progressive.jpg", "odd_333x251.jpg", "ffmpeg_420.jpg", "large_1024.jpg", "rgb8.png", "lossy.webp"} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		info, err := ximage.Probe(data)
		if err != nil {
			t.Fatal(err)
		}
		for epoch := uint64(0); epoch < 3; epoch++ {
			key := file
			out, err := g.Run(context.Background(), Sample{Key: key, Epoch: epoch, Data: data})
			if err != nil {
				t.Fatal(err)
			}
			tt := out.Values[0].Tensor
			got := make([]float32, tt.Elems())
			for i := range got {
				got[i] = tt.Float32At(i)
			}
			// The box and flip the graph drew, recomputed from the same streams.
			top, left, h, w := rrcParams(NewEnv(g.Seed, key, epoch, "rrc", params["rrc"], g.Limits), info.Width, info.Height)
			flip := Uniform(NewEnv(g.Seed, key, epoch, "flip", params["flip"], g.Limits).Rand, 0, 1) < 0.5
			if flip {
				flips++
			}
			if w >= 2*224 && h >= 2*224 {
				scaled++ // a DCT-scaled decode (large_1024.jpg)
			}
			f := "0"
			if flip {
				f = "1"
			}
			cmd := exec.Command(py, "testdata/pillow_ref.py", "tensor", filepath.Join(dir, file), "224", "224", "bilinear",
				fmt.Sprint(left), fmt.Sprint(top), fmt.Sprint(left+w), fmt.Sprint(top+h), f)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			ref, err := cmd.Output()
			if err != nil {
				t.Fatalf("pillow_ref tensor: %v\n%s", err, stderr.String())
			}
			nl := bytes.IndexByte(ref, '\n')
			if string(ref[:nl]) != "224 224 3 f32" || len(ref)-nl-1 != 4*len(got) {
				t.Fatalf("reference header %q, %d bytes", ref[:nl], len(ref)-nl-1)
			}
			ref = ref[nl+1:]
			var sum, maxd float64
			for i, v := range got {
				r := math.Float32frombits(binary.LittleEndian.Uint32(ref[4*i:]))
				d := math.Abs(float64(v-r)) * std[i/(224*224)] * 255
				sum += d
				maxd = math.Max(maxd, d)
			}
			mad := sum / float64(len(got))
			t.Logf("%s epoch %d: box (%d,%d %dx%d) flip %v: mean |diff| %.3f levels, max %.2f", file, epoch, left, top, w, h, flip, mad, maxd)
			limit, maxLimit := 0.5, 8.0
			if w >= 2*224 && h >= 2*224 {
				limit, maxLimit = 2.0, 40.0 // decoded at 1/2 scale in the DCT domain (dct_scale)
			}
			if mad > limit || maxd > maxLimit {
				t.Errorf("%s epoch %d: mean |diff| %.3f levels (limit %.1f), max %.2f (limit %.0f) vs torchvision semantics", file, epoch, mad, limit, maxd, maxLimit)
			}
		}
	}
	if flips == 0 {
		t.Error("no flipped sample: the flip path went untested")
	}
	t.Logf("%d flipped, %d DCT-scaled", flips, scaled)
}
