package xformgraph

import (
	"context"
	"testing"
)

// TestFusedTensorMatchesImage checks that the one-pass planes->tensor path gives the same
// bytes as materializing the image and packing it (JPEG input, so planes are used).
func TestFusedTensorMatchesImage(t *testing.T) {
	g := mustCompile(t, `{"version":1,"seed":"5","nodes":[
	  {"id":"d","op":"decode_image","input":"input"},
	  {"id":"r","op":"random_resized_crop","input":"d","params":{"size":[57,81]}},
	  {"id":"f","op":"hflip","input":"r"},
	  {"id":"chw","op":"to_tensor","input":"f","params":{"layout":"CHW","dtype":"uint8"}},
	  {"id":"hwc","op":"to_tensor","input":"f","params":{"layout":"HWC","dtype":"uint8"}},
	  {"id":"n","op":"normalize","input":"f","params":{"mean":[0.485,0.456,0.406],"std":[0.229,0.224,0.225]}},
	  {"id":"f32","op":"to_tensor","input":"n","params":{"layout":"CHW","dtype":"float32"}}],
	 "outputs":["f","chw","hwc","f32"]}`)
	lut, _ := normLUT(3, 1.0/255, []float64{0.485, 0.456, 0.406}, []float64{0.229, 0.224, 0.225})
	for e := uint64(0); e < 4; e++ {
		out, err := g.Run(context.Background(), Sample{Key: "k", Epoch: e, Data: testJPEG(t, 320, 240, false)})
		if err != nil {
			t.Fatal(err)
		}
		img, chw, hwc, f32 := out.Values[0].Image, out.Values[1].Tensor, out.Values[2].Tensor, out.Values[3].Tensor
		for y := 0; y < img.Height; y++ {
			for x := 0; x < img.Width; x++ {
				for c := 0; c < 3; c++ {
					v := img.Pix[y*img.Stride+x*3+c]
					i := (c*img.Height+y)*img.Width + x
					if chw.Data[i] != v || hwc.Data[(y*img.Width+x)*3+c] != v || f32.Float32At(i) != lut[c][v] {
						t.Fatalf("epoch %d: (%d,%d,%d) differs", e, x, y, c)
					}
				}
			}
		}
	}
}
