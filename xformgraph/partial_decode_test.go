package xformgraph

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	ximage "github.com/newtricks/newtricks/xformgraph/image"
)

// TestPartialDecodeMatchesFull checks that a plan evaluated on the top rows of a JPEG
// (decoded down to the plan's last row only) gives the bytes it gives on the whole picture.
func TestPartialDecodeMatchesFull(t *testing.T) {
	inputs := map[string][]byte{"go-320x240": testJPEG(t, 320, 240, false)}
	if d := os.Getenv("NEWTRICKS_XFORM_MEDIA"); d != "" {
		for _, name := range []string{"photo_q90_420.jpg", "baseline_422.jpg", "baseline_444.jpg", "odd_333x251.jpg", "gray.jpg"} {
			if b, err := os.ReadFile(filepath.Join(d, "images", name)); err == nil {
				inputs[name] = b
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, data := range inputs {
		info, err := ximage.Probe(data)
		if err != nil {
			t.Fatal(err)
		}
		opt := ximage.DecodeOptions{JPEG: jpegPlanar}
		full, _, ok, err := ximage.DecodePlanar(data, opt, 0)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", name, ok, err)
		}
		partial := 0
		for i := range 60 {
			w, h := 1+rng.IntN(info.Width), 1+rng.IntN(info.Height)
			x, y := rng.IntN(info.Width-w+1), rng.IntN(info.Height-h+1)
			plan := ximage.Identity(info.Width, info.Height)
			if err := plan.Crop(x, y, w, h); err != nil {
				t.Fatal(err)
			}
			f := []ximage.Filter{ximage.FilterBilinear, ximage.FilterBicubic, ximage.FilterBox, ximage.FilterNearest}[i%4]
			plan.Resize(1+rng.IntN(224), 1+rng.IntN(224), f)
			if i%2 == 1 {
				plan.Flip()
			}
			opt.Rows = y + h
			top, _, ok, err := ximage.DecodePlanar(data, opt, 0)
			if err != nil || !ok {
				t.Fatalf("%s: rows %d: %v %v", name, opt.Rows, ok, err)
			}
			if top.Height < info.Height {
				partial++
			}
			for _, ch := range []int{1, 3} {
				a, b := plan.ApplyPlanarPlanes(full, ch), plan.ApplyPlanarPlanes(top, ch)
				for c := range a {
					if !bytes.Equal(a[c], b[c]) {
						t.Fatalf("%s: crop (%d,%d %dx%d) filter %d channels %d: plane %d differs", name, x, y, w, h, f, ch, c)
					}
				}
			}
		}
		if partial == 0 {
			t.Errorf("%s: no partial decode happened", name)
		}
	}
}

// TestDeferredDecodeTwoConsumers runs a small crop and the whole image off one decode: the
// second consumer needs rows the first did not decode.
func TestDeferredDecodeTwoConsumers(t *testing.T) {
	g := mustCompile(t, `{"version":1,"seed":"5","nodes":[
	  {"id":"d","op":"decode_image","input":"input"},
	  {"id":"c","op":"crop","input":"d","params":{"x":8,"y":4,"width":100,"height":20}},
	  {"id":"tc","op":"to_tensor","input":"c","params":{"layout":"CHW","dtype":"uint8"}},
	  {"id":"td","op":"to_tensor","input":"d","params":{"layout":"HWC","dtype":"uint8"}}],
	 "outputs":["tc","td","c"]}`)
	data := testJPEG(t, 320, 240, false)
	out, err := g.Run(context.Background(), Sample{Key: "k", Data: data})
	if err != nil {
		t.Fatal(err)
	}
	alone := mustCompile(t, `{"version":1,"seed":"5","nodes":[
	  {"id":"d","op":"decode_image","input":"input"},
	  {"id":"c","op":"crop","input":"d","params":{"x":8,"y":4,"width":100,"height":20}},
	  {"id":"tc","op":"to_tensor","input":"c","params":{"layout":"CHW","dtype":"uint8"}}],
	 "outputs":["tc"]}`)
	ref, err := alone.Run(context.Background(), Sample{Key: "k", Data: data})
	if err != nil {
		t.Fatal(err)
	}
	full, err := mustCompile(t, `{"version":1,"nodes":[{"id":"d","op":"decode_image","input":"input"},
	  {"id":"td","op":"to_tensor","input":"d","params":{"layout":"HWC","dtype":"uint8"}}],"outputs":["td"]}`).Run(context.Background(), Sample{Key: "k", Data: data})
	if err != nil {
		t.Fatal(err)
	}
	tc, td, img := out.Values[0].Tensor, out.Values[1].Tensor, out.Values[2].Image
	if !bytes.Equal(tc.Data, ref.Values[0].Tensor.Data) || !bytes.Equal(td.Data, full.Values[0].Tensor.Data) {
		t.Fatal("outputs differ from the same nodes run alone")
	}
	for y := range 20 {
		for x := range 100 {
			for c := range 3 {
				if v := tc.Data[(c*20+y)*100+x]; img.Pix[y*img.Stride+x*3+c] != v {
					t.Fatalf("(%d,%d,%d) differs: tensor %d image %d", x, y, c, v, img.Pix[y*img.Stride+x*3+c])
				}
			}
		}
	}
}
