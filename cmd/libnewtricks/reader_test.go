package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"

	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

func tensorFrames(t *testing.T, shape []int, fill byte) []byte {
	n := 1
	for _, d := range shape {
		n *= d
	}
	p := make([]byte, n)
	for i := range p {
		p[i] = fill + byte(i)
	}
	f := &frame.Frame{Kind: frame.KindTensor, DType: 1, Layout: 1, Shape: shape, Domain: "d", Payload: p}
	b, err := f.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dirty allocates like malloc may: memory full of garbage.
func dirty(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 0xAA
	}
	return b
}

func decodeStep(t *testing.T, b []byte) (stepHeader, []byte) {
	t.Helper()
	if string(b[:4]) != "NTST" {
		t.Fatalf("magic %q", b[:4])
	}
	n := int(binary.LittleEndian.Uint64(b[16:]))
	var h stepHeader
	if err := json.Unmarshal(b[24:24+n], &h); err != nil {
		t.Fatal(err)
	}
	return h, b[24+(n+7)&^7:]
}

func TestEncodeStepBatchesUniformOutputs(t *testing.T) {
	st := &reader.Step{Step: 7, Samples: []reader.Sample{
		{Slot: 0, Key: "a", Frames: tensorFrames(t, []int{2, 3, 1}, 10), Path: "offload"},
		{Slot: 1, Key: "bad", Err: errors.New("corrupt")},
		{Slot: 2, Key: "c", Frames: tensorFrames(t, []int{2, 3, 1}, 50), Path: "raw"},
	}}
	b, err := encodeStep(st, dirty)
	if err != nil {
		t.Fatal(err)
	}
	h, data := decodeStep(t, b)
	if !h.Batched || h.Step != 7 || len(h.Outputs) != 1 || h.Outputs[0].Len != 12 {
		t.Fatalf("header %+v", h)
	}
	if h.Samples[0].Row != 0 || h.Samples[1].Row != -1 || h.Samples[1].Error != "corrupt" || h.Samples[2].Row != 1 {
		t.Fatalf("samples %+v", h.Samples)
	}
	if data[0] != 10 || data[5] != 15 || data[6] != 50 || data[11] != 55 {
		t.Fatalf("batch %v", data[:12])
	}
	if len(data) != 16 || data[12]|data[13]|data[14]|data[15] != 0 {
		t.Fatalf("padding after the batch: % x", data[12:])
	}
}

func TestEncodeStepKeepsFramesWhenShapesDiffer(t *testing.T) {
	a, c := tensorFrames(t, []int{2, 3, 1}, 1), tensorFrames(t, []int{3, 3, 1}, 2)
	st := &reader.Step{Step: 1, Samples: []reader.Sample{{Slot: 0, Key: "a", Frames: a}, {Slot: 1, Key: "c", Frames: c}}}
	b, err := encodeStep(st, dirty)
	if err != nil {
		t.Fatal(err)
	}
	h, data := decodeStep(t, b)
	if data[len(a)] != 0 || data[len(a)+1] != 0 { // padding after the first sample's frames
		t.Fatalf("padding not zeroed: % x", data[len(a):h.Samples[1].Off])
	}
	if h.Batched || h.Samples[1].Off%8 != 0 {
		t.Fatalf("header %+v", h)
	}
	for i, want := range [][]byte{a, c} {
		m := h.Samples[i]
		if string(data[m.Off:m.Off+m.Len]) != string(want) {
			t.Fatalf("sample %d frames differ", i)
		}
	}
}

// A sample's non-media members follow the outputs, each 8-aligned, with zeroed padding, on the
// batched and the unbatched layout; a failed sample has none.
func TestEncodeStepMembers(t *testing.T) {
	cls, txt := []byte("7"), []byte("a caption \u2014 caf\u00e9")
	for _, batched := range []bool{true, false} {
		shape := []int{2, 3, 1}
		if !batched {
			shape = []int{3, 3, 1}
		}
		st := &reader.Step{Step: 3, Samples: []reader.Sample{
			{Slot: 0, Key: "a", Frames: tensorFrames(t, []int{2, 3, 1}, 1), Members: []dataset.Member{{Name: "cls", Data: cls}, {Name: "txt", Data: txt}}},
			{Slot: 1, Key: "bad", Err: errors.New("corrupt"), Members: []dataset.Member{{Name: "cls", Data: cls}}},
			{Slot: 2, Key: "c", Frames: tensorFrames(t, shape, 2), Members: []dataset.Member{{Name: "cls", Data: []byte("")}}},
		}}
		b, err := encodeStep(st, dirty)
		if err != nil {
			t.Fatal(err)
		}
		h, data := decodeStep(t, b)
		if h.Batched != batched {
			t.Fatalf("batched %v, want %v", h.Batched, batched)
		}
		if len(h.Samples[1].Members) != 0 || len(h.Samples[0].Members) != 2 || len(h.Samples[2].Members) != 1 {
			t.Fatalf("members %+v", h.Samples)
		}
		for i, want := range map[int][][]byte{0: {cls, txt}, 2: {{}}} {
			for j, mm := range h.Samples[i].Members {
				if mm.Off%8 != 0 || string(data[mm.Off:mm.Off+mm.Len]) != string(want[j]) || mm.Name != st.Samples[i].Members[j].Name {
					t.Fatalf("sample %d member %d: %+v %q", i, j, mm, data[mm.Off:mm.Off+mm.Len])
				}
				for _, p := range data[mm.Off+mm.Len : min(len(data), mm.Off+(mm.Len+7)&^7)] {
					if p != 0 {
						t.Fatalf("padding after member %+v not zeroed", mm)
					}
				}
			}
		}
	}
}
