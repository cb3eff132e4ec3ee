// Package frame is the wire format of a transformed sample: a small self-describing header
// followed by the payload, either a tensor (dtype, layout, shape) or raw passthrough bytes
// (the encoded sample, untouched), so a reader tells one from the other without guessing.
// Every frame names the determinism domain of the process that wrote it (see
// xformgraph.DeterminismDomain), so a reader knows whether the bytes are what it would
// have computed itself.
//
// Layout of version 2 (all integers little-endian):
//
//	offset size field
//	0      4    magic "NTXF"
//	4      1    version (2)
//	5      1    kind: 1 tensor, 2 raw
//	6      1    dtype: 1 uint8, 2 float16, 3 bfloat16, 4 float32, 5 int32, 6 int64 (tensor);
//	            media hint (raw)
//	7      1    layout: 1 HWC, 2 CHW, 3 THWC, 4 TCHW, 5 L, 6 NL (tensor); 0 (raw)
//	8      1    rank: number of dims (tensor: 3 or 4, 1 for L, 2 for NL); 0 (raw)
//	9      1    reserved, zero
//	10     2    D: bytes of the domain field, a multiple of 8
//	12     4    CRC-32 (IEEE, as zlib.crc32) of the payload
//	16     8    payload length in bytes
//	24     8*rank dims, uint64 each, in layout order
//	...    D    determinism domain, ASCII, padded with NUL bytes to a multiple of 8
//	...    n    payload: tensor elements row-major little-endian, or the raw bytes
//
// The padding keeps the payload 8-byte aligned relative to the frame's start. Version 1
// (still read, never written) had no domain: bytes 9-11 were reserved and zero.
//
// A sample with several outputs is several frames back to back; each is self-delimiting.
// CRC-32/IEEE rather than CRC-32C so that a reader needs only Python's zlib (and Go's
// hash/crc32 computes both with hardware help).
package frame

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Magic starts every frame.
const Magic = "NTXF"

// Version is the version written; Parse also reads version 1 (no domain).
const Version = 2

// MaxDomain bounds the domain field (padded).
const MaxDomain = 1024

// HeaderSize is the fixed part of the header (dims follow).
const HeaderSize = 24

// Kind of payload.
type Kind uint8

const (
	KindTensor Kind = 1
	KindRaw    Kind = 2
)

// Media hints for raw frames (byte 6).
const (
	MediaUnknown uint8 = 0
	MediaJPEG    uint8 = 1
	MediaPNG     uint8 = 2
	MediaWebP    uint8 = 3
	MediaVideo   uint8 = 4
)

// MaxRank bounds the dims a reader accepts.
const MaxRank = 8

// Errors.
var (
	ErrFormat   = errors.New("frame: malformed frame")
	ErrVersion  = errors.New("frame: unknown frame version")
	ErrChecksum = errors.New("frame: checksum mismatch")
)

// Frame is one decoded frame. For a tensor, DType and Layout use the numbering of
// xformgraph.DType and xformgraph.Layout.
type Frame struct {
	Kind   Kind
	DType  uint8 // tensor dtype, or raw media hint
	Layout uint8
	Shape  []int
	// Domain is the writer's determinism domain (xformgraph.DeterminismDomain.String):
	// printable ASCII without NUL, at most MaxDomain-8 bytes; empty in version 1 frames.
	Domain  string
	Payload []byte
}

// elemSize and layoutRank: dtypes 5, 6 (int32, int64) and layouts 5, 6 (L: a token
// sequence, NL: rows of them) came with tokenization; frames without them read as before.
var elemSize = map[uint8]int{1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 8}

var layoutRank = map[uint8]int{1: 3, 2: 3, 3: 4, 4: 4, 5: 1, 6: 2}

// Validate checks the header fields against the payload size.
func (f *Frame) Validate() error {
	if len(f.Domain) > MaxDomain-8 {
		return fmt.Errorf("%w: domain of %d bytes", ErrFormat, len(f.Domain))
	}
	for i := 0; i < len(f.Domain); i++ {
		if c := f.Domain[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("%w: domain byte %#x", ErrFormat, c)
		}
	}
	switch f.Kind {
	case KindRaw:
		if f.Layout != 0 || len(f.Shape) != 0 {
			return fmt.Errorf("%w: raw frame with layout/shape", ErrFormat)
		}
		return nil
	case KindTensor:
		es := elemSize[f.DType]
		if es == 0 {
			return fmt.Errorf("%w: dtype %d", ErrFormat, f.DType)
		}
		want := layoutRank[f.Layout]
		if want == 0 || len(f.Shape) != want {
			return fmt.Errorf("%w: layout %d with %d dims", ErrFormat, f.Layout, len(f.Shape))
		}
		n := uint64(es)
		for _, d := range f.Shape {
			if d <= 0 || d > 1<<31 {
				return fmt.Errorf("%w: dim %d", ErrFormat, d)
			}
			n *= uint64(d)
			if n > 1<<40 {
				return fmt.Errorf("%w: tensor too large", ErrFormat)
			}
		}
		if n != uint64(len(f.Payload)) {
			return fmt.Errorf("%w: shape %v needs %d bytes, payload has %d", ErrFormat, f.Shape, n, len(f.Payload))
		}
		return nil
	}
	return fmt.Errorf("%w: kind %d", ErrFormat, f.Kind)
}

// AppendTo appends the encoded frame to b.
func (f *Frame) AppendTo(b []byte) ([]byte, error) {
	h, err := f.header()
	if err != nil {
		return b, err
	}
	return append(append(b, h...), f.Payload...), nil
}

// Write writes the encoded frame to w (header, then the payload without copying it).
func (f *Frame) Write(w io.Writer) error {
	h, err := f.header()
	if err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	_, err = w.Write(f.Payload)
	return err
}

func (f *Frame) header() ([]byte, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	dl := (len(f.Domain) + 7) &^ 7
	b := make([]byte, HeaderSize, HeaderSize+8*len(f.Shape)+dl)
	copy(b[:4], Magic)
	b[4], b[5], b[6], b[7], b[8] = Version, byte(f.Kind), f.DType, f.Layout, byte(len(f.Shape))
	binary.LittleEndian.PutUint16(b[10:], uint16(dl))
	binary.LittleEndian.PutUint32(b[12:], crc32.ChecksumIEEE(f.Payload))
	binary.LittleEndian.PutUint64(b[16:], uint64(len(f.Payload)))
	for _, d := range f.Shape {
		b = binary.LittleEndian.AppendUint64(b, uint64(d))
	}
	b = append(b, f.Domain...)
	return append(b, make([]byte, dl-len(f.Domain))...), nil
}

// Parse decodes the frame at the start of b and returns it with the rest of b. The
// payload aliases b. The checksum is verified.
func Parse(b []byte) (*Frame, []byte, error) {
	if len(b) < HeaderSize {
		return nil, b, fmt.Errorf("%w: %d bytes, header needs %d", ErrFormat, len(b), HeaderSize)
	}
	if string(b[:4]) != Magic {
		return nil, b, fmt.Errorf("%w: bad magic %q", ErrFormat, b[:4])
	}
	dl := 0
	switch b[4] {
	case 1:
		if b[9]|b[10]|b[11] != 0 {
			return nil, b, fmt.Errorf("%w: reserved bytes set", ErrFormat)
		}
	case 2:
		if b[9] != 0 {
			return nil, b, fmt.Errorf("%w: reserved byte set", ErrFormat)
		}
		dl = int(binary.LittleEndian.Uint16(b[10:]))
		if dl%8 != 0 || dl > MaxDomain {
			return nil, b, fmt.Errorf("%w: domain field of %d bytes", ErrFormat, dl)
		}
	default:
		return nil, b, fmt.Errorf("%w: version %d", ErrVersion, b[4])
	}
	rank := int(b[8])
	if rank > MaxRank {
		return nil, b, fmt.Errorf("%w: rank %d", ErrFormat, rank)
	}
	f := &Frame{Kind: Kind(b[5]), DType: b[6], Layout: b[7]}
	sum := binary.LittleEndian.Uint32(b[12:])
	n := binary.LittleEndian.Uint64(b[16:])
	off := HeaderSize + 8*rank + dl
	if len(b) < off {
		return nil, b, fmt.Errorf("%w: truncated header", ErrFormat)
	}
	for i := 0; i < rank; i++ {
		d := binary.LittleEndian.Uint64(b[HeaderSize+8*i:])
		if d == 0 || d > 1<<31 {
			return nil, b, fmt.Errorf("%w: dim %d", ErrFormat, d)
		}
		f.Shape = append(f.Shape, int(d))
	}
	if n > uint64(len(b)-off) {
		return nil, b, fmt.Errorf("%w: payload of %d bytes, %d left", ErrFormat, n, len(b)-off)
	}
	dom := b[HeaderSize+8*rank : off]
	end := len(dom)
	for end > 0 && dom[end-1] == 0 {
		end--
	}
	if len(dom)-end >= 8 {
		return nil, b, fmt.Errorf("%w: domain padding of %d bytes", ErrFormat, len(dom)-end)
	}
	f.Domain = string(dom[:end])
	f.Payload = b[off : off+int(n)]
	if err := f.Validate(); err != nil {
		return nil, b, err
	}
	if crc32.ChecksumIEEE(f.Payload) != sum {
		return nil, b, ErrChecksum
	}
	return f, b[off+int(n):], nil
}
