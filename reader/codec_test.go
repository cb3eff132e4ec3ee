package reader

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// TestPoolClasses: every size gets a buffer at least as large and at most 1/8
// larger (above 4 KiB), and a buffer comes back to the class it was made for.
func TestPoolClasses(t *testing.T) {
	var p bufPool
	for _, n := range []int{0, 1, 100, 4095, 4096, 4097, 153_624, 301_080, 1 << 20, 1<<20 + 1, 64 << 20, 64<<20 + 1} {
		b := p.get(n)
		if len(*b) < n || (n > 4096 && len(*b) > n+n/8) {
			t.Errorf("get(%d) = %d bytes", n, len(*b))
		}
		c, _, ok := poolClass(n)
		p.put(b)
		if ok {
			if c2, size, _ := poolClass(cap(*b)); c2 != c || size != cap(*b) {
				t.Errorf("buffer of %d bytes for %d: class %d, returned to %d", cap(*b), n, c, c2)
			}
		}
	}
}

// TestBatchDecoding: a batch split across many gRPC buffers at odd places decodes into one
// pooled buffer per sample, each sample's frames aliasing its own buffer; a batch with a field
// this reader does not know is decoded by the standard codec, all samples intact.
func TestBatchDecoding(t *testing.T) {
	want := &pb.OffloadSampleBatch{}
	for i := 0; i < 5; i++ {
		f := bytes.Repeat([]byte{byte(i + 1)}, 5000+i*7919)
		want.Samples = append(want.Samples, &pb.OffloadSample{Step: 9, Slot: uint32(i), Key: fmt.Sprint("k", i), Epoch: 2, Frames: f, NodeMicros: 7})
	}
	// Non-media members (issue 21) decode beside the frames, aliasing the same buffer.
	want.Samples[1].Members = []*pb.SampleMember{{Name: "cls", Data: []byte("3")}, {Name: "txt", Data: []byte("a caption")}, {Name: "json", Data: nil}}
	want.Samples = append(want.Samples, &pb.OffloadSample{Step: 9, Slot: 5, Key: "bad", ErrorCode: 14, Error: "unavailable"},
		&pb.OffloadSample{Step: 1<<40 + 3, Slot: 6, Key: "neg", ErrorCode: -2, Frames: []byte{1, 2, 3}})
	enc, err := proto.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	split := func(b []byte, n int) mem.BufferSlice {
		var s mem.BufferSlice
		for len(b) > 0 {
			k := min(n, len(b))
			s = append(s, mem.SliceBuffer(append([]byte(nil), b[:k]...)))
			b = b[k:]
		}
		return s
	}
	// A field this reader does not know inside a sample is skipped.
	one := protowire.AppendTag(append([]byte(nil), mustMarshal(t, want.Samples[0])...), 42, protowire.BytesType)
	one = protowire.AppendBytes(one, []byte("later"))
	var s0 pb.OffloadSample
	if err := decodeSample(one, &s0); err != nil || !proto.Equal(&s0, want.Samples[0]) {
		t.Errorf("sample with an unknown field: %v", err)
	}
	for _, extra := range []bool{false, true} {
		b := enc
		if extra {
			b = protowire.AppendTag(append([]byte(nil), enc...), 99, protowire.VarintType)
			b = protowire.AppendVarint(b, 1)
		}
		c := &sampleCodec{pool: &bufPool{}}
		got := &pb.OffloadSampleBatch{}
		if err := c.Unmarshal(split(b, 1000), got); err != nil {
			t.Fatalf("extra field %v: %v", extra, err)
		}
		bufs := c.take()
		if len(got.Samples) != len(want.Samples) {
			t.Fatalf("extra field %v: %d samples", extra, len(got.Samples))
		}
		for i, s := range got.Samples {
			if !proto.Equal(s, want.Samples[i]) {
				t.Errorf("extra field %v: sample %d differs", extra, i)
			}
			if !extra && (i >= len(bufs) || bufs[i] == nil || (len(s.Frames) > 0 && !within(*bufs[i], s.Frames))) {
				t.Errorf("sample %d does not alias a buffer of its own (%d bufs, nil %v)", i, len(bufs), i < len(bufs) && bufs[i] == nil)
			}
			for _, m := range s.Members {
				if !extra && len(m.Data) > 0 && !within(*bufs[i], m.Data) {
					t.Errorf("sample %d member %q does not alias its buffer", i, m.Name)
				}
			}
		}
		if extra && len(bufs) != 0 {
			t.Errorf("the standard codec's samples hold %d pooled buffers", len(bufs))
		}
	}
}

// within reports whether sub lies in b's memory.
func within(b, sub []byte) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	return p >= lo && p+uintptr(len(sub)) <= lo+uintptr(len(b))
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
