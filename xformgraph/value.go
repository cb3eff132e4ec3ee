package xformgraph

import (
	"fmt"

	ximage "github.com/newtricks/newtricks/xformgraph/image"
)

// Kind is the type of a Value on a graph edge; graph validation matches an op's accepted
// kinds against its input's kind.
type Kind uint8

const (
	KindInvalid Kind = iota
	KindBytes        // encoded media: Value.Bytes
	KindImage        // one decoded image: Value.Image
	KindFrames       // decoded video frames, presentation order, same size: Value.Frames
	KindTensor       // Value.Tensor
	KindTokens       // token ids and attention mask of tokenized text: Value.Tokens
	// KindSame is only used in OpDef.Out: the output kind is the input kind (hflip works on
	// an image and on a frame stack).
	KindSame Kind = 255
)

func (k Kind) String() string {
	switch k {
	case KindBytes:
		return "bytes"
	case KindImage:
		return "image"
	case KindFrames:
		return "frames"
	case KindTensor:
		return "tensor"
	case KindTokens:
		return "tokens"
	case KindSame:
		return "same"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Value is what flows along an edge. Exactly the field named by Kind is set. Ops must not
// modify their input in place: a value can feed several nodes.
//
// Values made by the spatial ops of this package may be lazy (pixels not computed yet, so
// that crop, resize, flip and normalize run as one fused pass). The runner materializes
// them before any op that did not declare OpDef.Lazy and before outputs, so an op without
// Lazy always finds Image, Frames or Tensor set.
type Value struct {
	Kind   Kind
	Bytes  []byte
	Image  *Image
	Frames []*Image
	Tensor *Tensor
	Tokens *Tokens

	lazy *lazyValue
	clip pendingClip // frames not decoded yet (decode_video mode all): see ops_video.go
}

// Image is an 8-bit interleaved (HWC) image: Channels is 1 (gray), 3 (RGB) or 4 (RGBA).
// Pixel (x, y) channel c is Pix[y*Stride + x*Channels + c]. It is an alias of the leaf
// package's type so that xformgraph/image and xformgraph/video share it without importing
// xformgraph. Images and video frames share this type so spatial ops work on both.
type Image = ximage.Image

// NewImage allocates a tightly packed image.
func NewImage(w, h, c int) *Image { return ximage.NewImage(w, h, c) }

// Tokens is tokenized text: Rows sequences of Len ids each, row-major, with their attention
// mask (1 for a token, 0 for padding). Layout is LayoutL for one sequence (Rows is 1) and
// LayoutNL for rows (packing, or one row per document). Its frame is the ids as an int32
// tensor; token_ids and attention_mask make tensors of either.
type Tokens struct {
	IDs    []uint32
	Mask   []uint8
	Rows   int
	Len    int
	Layout Layout
}

// Static is what graph validation knows about a value before running: the kind and, when
// fixed by the ops so far, its dimensions (0 = not known until run time).
type Static struct {
	Kind     Kind
	T        int // frames (KindFrames, 4-D tensors)
	H, W     int
	Channels int
	DType    DType  // KindTensor only
	Layout   Layout // KindTensor and KindTokens
	// Rows and Len are the dimensions of token sequences (KindTokens, and tensors of layout
	// L, where Rows is 1, or NL).
	Rows, Len int
	// MaxBytes bounds Bytes when the dimensions are not all known (0: no bound known); the
	// output-size limit is checked against it at Compile.
	MaxBytes int64
}

// Bound is the byte size of the value if known, else MaxBytes (0: unknown).
func (s Static) Bound() int64 {
	if b := s.Bytes(); b > 0 {
		return b
	}
	return s.MaxBytes
}

// Bytes is the byte size of the value when all dimensions are known, else 0.
func (s Static) Bytes() int64 {
	if s.Kind == KindTokens || s.Layout == LayoutL || s.Layout == LayoutNL {
		if s.Rows == 0 || s.Len == 0 {
			return 0
		}
		es := int64(4) // a tokens value frames as int32 ids
		if s.Kind == KindTensor {
			es = int64(s.DType.Size())
		}
		return int64(s.Rows) * int64(s.Len) * es
	}
	if s.H == 0 || s.W == 0 || s.Channels == 0 {
		return 0
	}
	n := int64(s.H) * int64(s.W) * int64(s.Channels)
	if s.Kind == KindFrames || s.Layout.Rank() == 4 {
		if s.T == 0 {
			return 0
		}
		n *= int64(s.T)
	}
	if s.Kind == KindTensor {
		n *= int64(s.DType.Size())
	}
	return n
}

// Size is the run-time byte size of v (what the output limit is compared with). v must
// be materialized.
func (v Value) Size() int64 {
	switch v.Kind {
	case KindBytes:
		return int64(len(v.Bytes))
	case KindImage:
		return int64(len(v.Image.Pix))
	case KindFrames:
		var n int64
		for _, f := range v.Frames {
			n += int64(len(f.Pix))
		}
		return n
	case KindTensor:
		return int64(len(v.Tensor.Data))
	case KindTokens:
		return 4 * int64(len(v.Tokens.IDs))
	}
	return 0
}
