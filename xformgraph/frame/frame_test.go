package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	tf := &Frame{Kind: KindTensor, DType: 1, Layout: 2, Shape: []int{3, 2, 2}, Domain: "xformgraph=1 goarch=tst", Payload: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
	rf := &Frame{Kind: KindRaw, DType: MediaJPEG, Payload: []byte("\xff\xd8raw")}
	b, err := tf.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = rf.AppendTo(b)
	var w bytes.Buffer
	if err := tf.Write(&w); err != nil || !bytes.Equal(w.Bytes(), b[:w.Len()]) {
		t.Fatalf("Write differs from AppendTo: %v", err)
	}
	f1, rest, err := Parse(b)
	if err != nil || f1.Kind != KindTensor || !bytes.Equal(f1.Payload, tf.Payload) || len(f1.Shape) != 3 || f1.Domain != tf.Domain {
		t.Fatalf("%+v %v", f1, err)
	}
	f2, rest, err := Parse(rest)
	if err != nil || f2.Kind != KindRaw || string(f2.Payload) != "\xff\xd8raw" || len(rest) != 0 || f2.Domain != "" {
		t.Fatalf("%+v %v", f2, err)
	}
	bad := append([]byte(nil), b...)
	if start := HeaderSize + 8*3 + 24; start%8 != 0 || b[start] != 1 || b[start-1] != 0 {
		t.Fatalf("payload not at the 8-aligned offset %d after the padded domain", start)
	}
	bad[HeaderSize+8*3+24] ^= 1
	if _, _, err := Parse(bad); !errors.Is(err, ErrChecksum) {
		t.Fatalf("corruption: %v", err)
	}
	for i := 0; i < len(b); i++ {
		if _, _, err := Parse(b[:i]); err == nil && i < len(b)-len("\xff\xd8raw")-HeaderSize {
			t.Fatalf("truncated to %d accepted", i)
		}
	}
	if _, err := (&Frame{Kind: KindTensor, DType: 4, Layout: 1, Shape: []int{1, 1, 1}, Payload: []byte{1}}).AppendTo(nil); err == nil {
		t.Fatal("inconsistent tensor accepted")
	}
}

// TestVersion1 reads a frame in the previous format (no domain field).
func TestVersion1(t *testing.T) {
	b := []byte("NTXF\x01\x02\x01\x00\x00\x00\x00\x00")
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE([]byte("abc")))
	b = binary.LittleEndian.AppendUint64(b, 3)
	b = append(b, "abc"...)
	f, rest, err := Parse(b)
	if err != nil || f.Kind != KindRaw || string(f.Payload) != "abc" || f.Domain != "" || len(rest) != 0 {
		t.Fatalf("%+v %v", f, err)
	}
	b[4] = 3
	if _, _, err := Parse(b); !errors.Is(err, ErrVersion) {
		t.Fatalf("version 3: %v", err)
	}
	for _, d := range []string{"a\x00b", "caf\xc3\xa9", string(make([]byte, MaxDomain))} {
		if _, err := (&Frame{Kind: KindRaw, Domain: d}).AppendTo(nil); err == nil {
			t.Errorf("domain %q accepted", d)
		}
	}
}

func FuzzParse(f *testing.F) {
	b, _ := (&Frame{Kind: KindTensor, DType: 1, Layout: 1, Shape: []int{1, 2, 3}, Payload: make([]byte, 6)}).AppendTo(nil)
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, _, err := Parse(data)
		if err == nil {
			if _, err := fr.AppendTo(nil); err != nil {
				t.Fatalf("parsed frame does not re-encode: %v", err)
			}
		}
	})
}

// TestTokenFrames: int32/int64 token tensors in layouts L (rank 1) and NL (rank 2).
func TestTokenFrames(t *testing.T) {
	for _, f := range []*Frame{
		{Kind: KindTensor, DType: 5, Layout: 5, Shape: []int{3}, Payload: make([]byte, 12)},
		{Kind: KindTensor, DType: 6, Layout: 6, Shape: []int{2, 3}, Payload: make([]byte, 48)},
	} {
		b, err := f.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		back, rest, err := Parse(b)
		if err != nil || len(rest) != 0 || back.DType != f.DType || back.Layout != f.Layout || len(back.Shape) != len(f.Shape) {
			t.Fatalf("%+v: %+v %v", f, back, err)
		}
	}
	for _, f := range []*Frame{
		{Kind: KindTensor, DType: 5, Layout: 5, Shape: []int{1, 3}, Payload: make([]byte, 12)}, // L is rank 1
		{Kind: KindTensor, DType: 6, Layout: 6, Shape: []int{2, 3}, Payload: make([]byte, 24)}, // int64 is 8 bytes
		{Kind: KindTensor, DType: 7, Layout: 5, Shape: []int{3}, Payload: make([]byte, 12)},
	} {
		if _, err := f.AppendTo(nil); err == nil {
			t.Errorf("%+v accepted", f)
		}
	}
}
