package reader

import (
	"fmt"
	"math/bits"
	"sync"

	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers the "proto" codec used for everything else
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/runtime/protoiface"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// sampleCodec decodes the OffloadSampleBatch (GetStepBatch) or OffloadSample (GetStep)
// messages of one stream so that a sample's bytes land once in the buffer the trainer gets
// (the samples of a batch share one buffer). gRPC hands a received message over as the
// pooled buffers of its HTTP/2 DATA frames; its default codec copies them into one pooled
// buffer and protobuf then copies the frames field out of that into a new allocation (two
// copies of every tensor byte, plus zeroing the new allocation). This codec copies the
// message once into a buffer from the reader's pool and lets the message's frames field alias
// it. Every other message goes through the standard proto codec. The wire format is the
// same: the codec is a local decoding choice, the peer sees "proto".
type sampleCodec struct {
	pool *bufPool
	// last is the buffer holding the most recently decoded message (RecvMsg on one
	// stream is sequential), taken by the receiving loop.
	last *[]byte
}

var protoCodec = encoding.GetCodecV2("proto")

func (c *sampleCodec) Name() string { return "proto" }

func (c *sampleCodec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (c *sampleCodec) Unmarshal(data mem.BufferSlice, v any) error {
	var m proto.Message
	switch x := v.(type) {
	case *pb.OffloadSample:
		m = x
	case *pb.OffloadSampleBatch:
		m = x
	default:
		return protoCodec.Unmarshal(data, v)
	}
	n := data.Len()
	bp := c.pool.get(n)
	buf := (*bp)[:n]
	data.CopyTo(buf)
	pm := m.ProtoReflect()
	methods := pm.ProtoMethods()
	if methods == nil || methods.Unmarshal == nil {
		c.pool.put(bp)
		return proto.Unmarshal(data.Materialize(), m)
	}
	// UnmarshalAliasBuffer: bytes fields point into buf instead of being copied (buf is not
	// modified by the decoder and is owned by the message from here on).
	if _, err := methods.Unmarshal(protoiface.UnmarshalInput{Message: pm, Buf: buf,
		Flags: protoiface.UnmarshalAliasBuffer, Depth: protowire.DefaultRecursionLimit}); err != nil {
		c.pool.put(bp)
		return fmt.Errorf("decode %T: %w", v, err)
	}
	*bp = buf
	c.last = bp
	return nil
}

// take returns the buffer of the last decoded message and forgets it.
func (c *sampleCodec) take() *[]byte {
	b := c.last
	c.last = nil
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
