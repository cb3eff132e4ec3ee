package xformgraph

import (
	"context"
	"fmt"
	"testing"
)

// Tiny and extreme-aspect inputs through every spatial op (regression guard for edge taps).
func TestTinyImages(t *testing.T) {
	g := mustCompile(t, `{"version":1,"seed":"2","nodes":[
	  {"id":"d","op":"decode_image","input":"input"},
	  {"id":"rrc","op":"random_resized_crop","input":"d","params":{"size":[7,5],"filter":"bicubic"}},
	  {"id":"f","op":"random_hflip","input":"rrc"},
	  {"id":"n","op":"normalize","input":"f","params":{"mean":[0.5],"std":[0.5]}},
	  {"id":"t","op":"to_tensor","input":"n"},
	  {"id":"r","op":"resize","input":"d","params":{"size":[3],"filter":"area"}},
	  {"id":"u","op":"to_tensor","input":"r","params":{"dtype":"uint8"}}],
	 "outputs":["t","u"]}`)
	for _, sz := range [][2]int{{1, 1}, {2, 3}, {1, 200}, {300, 1}, {17, 9}} {
		for _, data := range [][]byte{testPNG(t, sz[0], sz[1]), testJPEG(t, sz[0], sz[1], false)} {
			for e := uint64(0); e < 5; e++ {
				if _, err := g.Run(context.Background(), Sample{Key: fmt.Sprint(sz), Epoch: e, Data: data}); err != nil {
					t.Fatalf("%v epoch %d: %v", sz, e, err)
				}
			}
		}
	}
}
