package reader

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers the "proto" codec used for everything else
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// sampleCodec decodes the OffloadSampleBatch (GetStepBatch) or OffloadSample (GetStep)
// messages of one stream so that every sample's bytes land once in a buffer of its own, the
// one the trainer gets. gRPC hands a received message over as the pooled buffers of its HTTP/2
// DATA frames; its default codec copies them into one pooled buffer and protobuf then copies
// the frames field out of that into a new allocation (two copies of every tensor byte, plus
// zeroing the new allocation). This codec copies each sample's encoding once into a buffer
// from the reader's pool, sized for that sample (so buffers are reused across steps whatever
// mix of samples a batch holds), and lets the message's frames field alias it. Every other
// message goes through the standard proto codec. The wire format is the same: the codec is a
// local decoding choice, the peer sees "proto".
type sampleCodec struct {
	pool *bufPool
	// bufs are the buffers of the most recently decoded message, one per sample in order
	// (RecvMsg on one stream is sequential), taken by the receiving loop; nil entries or a
	// short list mean samples decoded into ordinary memory.
	bufs []*[]byte
}

var protoCodec = encoding.GetCodecV2("proto")

func (c *sampleCodec) Name() string { return "proto" }

func (c *sampleCodec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (c *sampleCodec) Unmarshal(data mem.BufferSlice, v any) error {
	switch m := v.(type) {
	case *pb.OffloadSample:
		n := data.Len()
		bp := c.pool.get(n)
		buf := (*bp)[:n]
		data.CopyTo(buf)
		if err := c.alias(buf, bp, m); err != nil {
			return err
		}
		return nil
	case *pb.OffloadSampleBatch:
		return c.unmarshalBatch(data, m)
	default:
		return protoCodec.Unmarshal(data, v)
	}
}

// alias decodes one OffloadSample from buf (held in bp) with its frames pointing into buf, and
// records bp as the sample's buffer. The message is decoded here, field by field: protobuf-go
// copies bytes fields even when asked to alias the input (UnmarshalAliasBuffer only affects its
// lazy decoding), which put every tensor byte into a fresh allocation a second time. Unknown
// fields (a later version of the message) are skipped.
func (c *sampleCodec) alias(buf []byte, bp *[]byte, m *pb.OffloadSample) error {
	if err := decodeSample(buf, m); err != nil {
		c.pool.put(bp)
		return fmt.Errorf("decode OffloadSample: %w", err)
	}
	*bp = buf
	c.bufs = append(c.bufs, bp)
	return nil
}

// decodeSample decodes an OffloadSample from b; Frames aliases b, strings are copied.
func decodeSample(b []byte, m *pb.OffloadSample) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v uint64
		var bs []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			bs, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		want := protowire.VarintType
		switch num {
		case 1:
			m.Step = v
		case 2:
			m.Slot = uint32(v)
		case 3:
			m.Source = uint32(v)
		case 4:
			m.Key, want = string(bs), protowire.BytesType
		case 5:
			m.Epoch = v
		case 6:
			m.Frames, want = bs, protowire.BytesType
		case 7:
			m.ErrorCode = int32(v)
		case 8:
			m.Error, want = string(bs), protowire.BytesType
		case 9:
			m.NodeMicros = uint32(v)
		case 10:
			if len(m.Members) == dataset.MaxMembers {
				return fmt.Errorf("%w: more than %d members in a sample", frame.ErrFormat, dataset.MaxMembers)
			}
			sm, err := decodeMember(bs)
			if err != nil {
				return err
			}
			m.Members, want = append(m.Members, sm), protowire.BytesType
		default:
			continue // unknown field: skipped
		}
		if typ != want {
			return fmt.Errorf("field %d has wire type %d", num, typ)
		}
	}
	return nil
}

// decodeMember decodes a SampleMember; Data aliases b, the name is copied.
func decodeMember(b []byte) (*pb.SampleMember, error) {
	m := &pb.SampleMember{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType || num != 1 && num != 2 {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil, protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		bs, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		if num == 1 {
			m.Name = string(bs)
		} else {
			m.Data = bs
		}
	}
	return m, nil
}

// unmarshalBatch reads the batch's samples (field 1, each length-delimited) straight from
// gRPC's buffers, each into a pooled buffer of its own size. A batch with any other field (a
// later version of the message) is decoded by the standard codec instead.
func (c *sampleCodec) unmarshalBatch(data mem.BufferSlice, m *pb.OffloadSampleBatch) error {
	r := data.Reader()
	defer r.Close()
	for r.Remaining() > 0 {
		tag, err := binary.ReadUvarint(r)
		if err != nil {
			return c.fail(fmt.Errorf("decode OffloadSampleBatch: %w", err))
		}
		if num, typ := protowire.DecodeTag(tag); num != 1 || typ != protowire.BytesType {
			c.releaseAll()
			m.Samples = nil
			return protoCodec.Unmarshal(data, m)
		}
		n, err := binary.ReadUvarint(r)
		if err != nil || n > uint64(r.Remaining()) {
			return c.fail(fmt.Errorf("decode OffloadSampleBatch: sample of %d bytes, %d left (%v)", n, r.Remaining(), err))
		}
		bp := c.pool.get(int(n))
		buf := (*bp)[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			c.pool.put(bp)
			return c.fail(err)
		}
		s := new(pb.OffloadSample)
		if err := c.alias(buf, bp, s); err != nil {
			return c.fail(err)
		}
		m.Samples = append(m.Samples, s)
	}
	return nil
}

func (c *sampleCodec) fail(err error) error {
	c.releaseAll()
	return err
}

func (c *sampleCodec) releaseAll() {
	for _, b := range c.bufs {
		c.pool.put(b)
	}
	c.bufs = c.bufs[:0]
}

// take returns the buffers of the last decoded message, one per sample, and forgets them.
func (c *sampleCodec) take() []*[]byte {
	b := c.bufs
	c.bufs = nil
	return b
}

// bufPool recycles sample buffers by capacity class, so a trainer that releases its steps
// (Step.Release) receives into memory that is already mapped and needs no zeroing. Classes
// are eight steps per power of two (a buffer is at most 1/8 larger than asked for) from
// 2 KiB to 64 MiB; larger buffers are not kept.
type bufPool struct {
	classes [(maxPoolExp - minPoolExp + 1) * 8]sync.Pool
}

const (
	minPoolExp = 12 // classes from 2 KiB + 256 B up
	maxPoolExp = 26 // 64 MiB
)

// poolClass returns the class of a buffer of n bytes and the class's capacity; ok is false
// outside the pooled range.
func poolClass(n int) (class, size int, ok bool) {
	if n > 1<<maxPoolExp {
		return 0, n, false
	}
	n = max(n, 1<<(minPoolExp-1)+1)
	e := bits.Len(uint(n - 1)) // 2^(e-1) < n <= 2^e
	step := 1 << (e - 4)
	k := (n - 1<<(e-1) + step - 1) / step // 1..8
	return (e-minPoolExp)*8 + k - 1, 1<<(e-1) + k*step, true
}

// get returns a buffer of capacity >= n (its length is its capacity).
func (p *bufPool) get(n int) *[]byte {
	c, size, ok := poolClass(n)
	if ok {
		if b, hit := p.classes[c].Get().(*[]byte); hit {
			*b = (*b)[:cap(*b)]
			return b
		}
	}
	b := make([]byte, size)
	return &b
}

// put returns a buffer obtained from get.
func (p *bufPool) put(b *[]byte) {
	if b == nil {
		return
	}
	if c, size, ok := poolClass(cap(*b)); ok && size == cap(*b) {
		p.classes[c].Put(b)
	}
}
