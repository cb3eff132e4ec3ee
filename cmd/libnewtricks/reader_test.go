package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"

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
