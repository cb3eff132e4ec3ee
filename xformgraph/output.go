package xformgraph

import (
	"fmt"

	"github.com/newtricks/newtricks/xformgraph/frame"
)

// ToFrame encodes a materialized value: a tensor as a tensor frame, encoded bytes as a raw
// passthrough frame (media hint from the signature), an image as a uint8 HWC tensor, a
// frame stack as a uint8 THWC tensor and tokens as their ids, an int32 L or NL tensor. Every
// frame carries this process's Domain.
func ToFrame(v Value) (*frame.Frame, error) {
	switch v.Kind {
	case KindTensor:
		t := v.Tensor
		if err := t.Validate(); err != nil {
			return nil, err
		}
		return &frame.Frame{Kind: frame.KindTensor, DType: uint8(t.DType), Layout: uint8(t.Layout), Shape: t.Shape, Domain: domainString(), Payload: t.Data}, nil
	case KindBytes:
		return RawFrame(v.Bytes), nil
	case KindTokens:
		t, err := tokenTensor(v.Tokens, false, DTypeInt32)
		if err != nil {
			return nil, err
		}
		return ToFrame(Value{Kind: KindTensor, Tensor: t})
	case KindImage, KindFrames:
		px := v.Frames
		layout := LayoutTHWC
		if v.Kind == KindImage {
			px, layout = []*Image{v.Image}, LayoutHWC
		}
		t, err := imagesToTensor(px, v.Kind == KindFrames, layout, DTypeUint8, nil)
		if err != nil {
			return nil, err
		}
		return ToFrame(Value{Kind: KindTensor, Tensor: t})
	}
	return nil, fmt.Errorf("%w: cannot frame %v", ErrTypeMismatch, v.Kind)
}

func mediaHint(b []byte) uint8 {
	switch {
	case len(b) >= 2 && b[0] == 0xff && b[1] == 0xd8:
		return frame.MediaJPEG
	case len(b) >= 8 && string(b[1:4]) == "PNG":
		return frame.MediaPNG
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return frame.MediaWebP
	case len(b) >= 12 && (string(b[4:8]) == "ftyp" || string(b[:4]) == "\x1a\x45\xdf\xa3"):
		return frame.MediaVideo
	}
	return frame.MediaUnknown
}

// AppendFrames appends one frame per output, in order.
func (o *Output) AppendFrames(b []byte) ([]byte, error) {
	for i, v := range o.Values {
		f, err := ToFrame(v)
		if err != nil {
			return b, fmt.Errorf("output %q: %w", o.Names[i], err)
		}
		if b, err = f.AppendTo(b); err != nil {
			return b, fmt.Errorf("output %q: %w", o.Names[i], err)
		}
	}
	return b, nil
}

// RawFrame wraps an untransformed sample (the passthrough path). It carries this process's
// Domain too: the receiver that transforms it locally can then say which domain its own
// result comes from, and compare.
func RawFrame(data []byte) *frame.Frame {
	return &frame.Frame{Kind: frame.KindRaw, DType: mediaHint(data), Domain: domainString(), Payload: data}
}
