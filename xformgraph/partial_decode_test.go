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

// TestRegionDecodeMatchesFull checks that a plan evaluated on the region of a JPEG that
// the deferred decode picks (columns and rows the plan reads, plus the margin, at the
// plan's DCT scale) gives the bytes it gives on the whole picture decoded at that scale.
func TestRegionDecodeMatchesFull(t *testing.T) {
	inputs := map[string][]byte{"go-320x240": testJPEG(t, 320, 240, false)}
	for _, name := range []string{"photo_420.jpg", "small_422.jpg", "small_444.jpg", "small_progressive.jpg", "small_gray.jpg", "ffmpeg_420.jpg", "exif_orient6.jpg"} {
		b, err := os.ReadFile(filepath.Join("golden", "testdata", "inputs", name))
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = b
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, data := range inputs {
		info, err := ximage.Probe(data)
		if err != nil {
			t.Fatal(err)
		}
		partial, scaled := 0, 0
		for i := range 80 {
			w, h := 1+rng.IntN(info.Width), 1+rng.IntN(info.Height)
			x, y := rng.IntN(info.Width-w+1), rng.IntN(info.Height-h+1)
			plan := ximage.Identity(info.Width, info.Height)
			if err := plan.Crop(x, y, w, h); err != nil {
				t.Fatal(err)
			}
			f := []ximage.Filter{ximage.FilterBilinear, ximage.FilterBicubic, ximage.FilterBox, ximage.FilterNearest}[i%4]
			side := 224
			if i%3 == 0 {
				side = 40 // small outputs: DCT scaling
			}
			plan.Resize(1+rng.IntN(side), 1+rng.IntN(side), f)
			if i%2 == 1 {
				plan.Flip()
			}
			l := &lazyValue{plan: plan}
			r := l.region(&deferredJPEG{width: info.Width, height: info.Height, eoi: true, dctScale: true})
			for _, ch := range []int{1, 3} {
				opt := ximage.DecodeOptions{JPEG: jpegDecoder, Channels: ch, Region: ximage.JPEGRegion{Denom: r.Denom}}
				full, _, ok, err := ximage.DecodePlanar(data, opt)
				if err != nil || !ok {
					t.Fatalf("%s: 1/%d: %v %v", name, r.Denom, ok, err)
				}
				opt.Region = r
				part, _, ok, err := ximage.DecodePlanar(data, opt)
				if err != nil || !ok {
					t.Fatalf("%s: region %+v: %v %v", name, r, ok, err)
				}
				if ch == 3 {
					if part.Width*part.Height < full.Width*full.Height {
						partial++
					}
					if r.Denom > 1 {
						scaled++
					}
				}
				a, b := plan.ApplyPlanarPlanes(full, ch), plan.ApplyPlanarPlanes(part, ch)
				for c := range a {
					if !bytes.Equal(a[c], b[c]) {
						t.Fatalf("%s: crop (%d,%d %dx%d) filter %d channels %d region %+v: plane %d differs", name, x, y, w, h, f, ch, r, c)
					}
				}
			}
		}
		if partial == 0 || scaled == 0 {
			t.Errorf("%s: %d region decodes, %d scaled", name, partial, scaled)
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
