package xformgraph

import (
	"bytes"
	"context"
	"testing"
)

// TestReleaseRecyclesWithoutStaleBytes fills the tensor pools with 0xAA garbage and checks
// that every tensor producer (fused JPEG rows, interleaved pixels, every layout and dtype)
// writes each byte of recycled memory: outputs equal a run on fresh memory.
func TestReleaseRecyclesWithoutStaleBytes(t *testing.T) {
	jpeg, png := testJPEG(t, 320, 240, false), testPNG(t, 200, 150)
	var graphs []string
	for _, lay := range []string{"CHW", "HWC"} {
		for _, dt := range []string{"float32", "float16", "bfloat16"} {
			graphs = append(graphs, `{"version":1,"seed":"3","nodes":[
			  {"id":"d","op":"decode_image","input":"input"},
			  {"id":"r","op":"random_resized_crop","input":"d","params":{"size":[64,48]}},
			  {"id":"f","op":"random_hflip","input":"r"},
			  {"id":"n","op":"normalize","input":"f","params":{"mean":[0.485,0.456,0.406],"std":[0.229,0.224,0.225]}},
			  {"id":"t","op":"to_tensor","input":"n","params":{"layout":"`+lay+`","dtype":"`+dt+`"}}],
			 "outputs":["t"]}`)
		}
		graphs = append(graphs, `{"version":1,"seed":"3","nodes":[
		  {"id":"d","op":"decode_image","input":"input"},
		  {"id":"r","op":"center_crop","input":"d","params":{"size":[50,40]}},
		  {"id":"t","op":"to_tensor","input":"r","params":{"layout":"`+lay+`","dtype":"uint8"}},
		  {"id":"u","op":"to_tensor","input":"d","params":{"layout":"`+lay+`","dtype":"float32"}}],
		 "outputs":["t","u"]}`)
	}
	poison := func() {
		for c := 12; c < 22; c++ {
			for i := 0; i < 4; i++ {
				b, _ := tensorBytes(1 << c)
				for j := range b {
					b[j] = 0xAA
				}
				(&Tensor{Data: b, pooled: true}).release()
			}
		}
	}
	for gi, js := range graphs {
		g := mustCompile(t, js)
		for _, data := range [][]byte{jpeg, png} {
			for e := uint64(0); e < 3; e++ {
				s := Sample{Key: "k", Epoch: e, Data: data}
				fresh, err := g.Run(context.Background(), s)
				if err != nil {
					t.Fatal(err)
				}
				want, err := fresh.AppendFrames(nil)
				if err != nil {
					t.Fatal(err)
				}
				poison() // fresh is not released: the pools hold garbage only
				again, err := g.Run(context.Background(), s)
				if err != nil {
					t.Fatal(err)
				}
				pooled := false
				for _, v := range again.Values {
					pooled = pooled || (v.Tensor != nil && v.Tensor.pooled)
				}
				if !pooled {
					t.Fatalf("graph %d: no output came from the pool", gi)
				}
				got, err := again.AppendFrames(nil)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("graph %d epoch %d: output on recycled memory differs from a fresh run", gi, e)
				}
				again.Release()
				if again.Values != nil {
					t.Fatal("Release left the values")
				}
				again.Release() // twice is harmless
			}
		}
	}
}
