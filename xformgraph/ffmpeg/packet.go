package ffmpeg

// #include "helpers.h"
import "C"

import "unsafe"

// Packet is an AVPacket: one compressed frame (or more, for some codecs) and its timestamps.
type Packet struct {
	c *C.AVPacket
}

// NewPacket allocates an empty packet.
func NewPacket() (*Packet, error) {
	p := C.av_packet_alloc()
	if p == nil {
		return nil, ErrNoMem
	}
	return &Packet{c: p}, nil
}

// NewPacketFromBytes allocates a packet holding a C copy of data (plus FFmpeg's input
// padding), e.g. a whole JPEG for an image decoder.
func NewPacketFromBytes(data []byte) (*Packet, error) {
	p, err := NewPacket()
	if err != nil {
		return nil, err
	}
	if err := newError(C.av_new_packet(p.c, C.int(len(data)))); err != nil {
		p.Free()
		return nil, err
	}
	if len(data) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(p.c.data)), len(data)), data)
	}
	return p, nil
}

// Free releases the packet and its data. Safe to call more than once.
func (p *Packet) Free() {
	if p.c != nil {
		C.nt_packet_free(p.c)
		p.c = nil
	}
}

// Unref drops the packet's data, keeping the packet for reuse.
func (p *Packet) Unref() { C.av_packet_unref(p.c) }

// StreamIndex is the stream the packet belongs to.
func (p *Packet) StreamIndex() int { return int(p.c.stream_index) }

// PTS is the presentation timestamp in the stream time base, or NoPTS.
func (p *Packet) PTS() int64 { return int64(p.c.pts) }

// DTS is the decoding timestamp in the stream time base, or NoPTS.
func (p *Packet) DTS() int64 { return int64(p.c.dts) }

// Duration in the stream time base (0 if unknown).
func (p *Packet) Duration() int64 { return int64(p.c.duration) }

// Pos is the byte position in the input, or -1.
func (p *Packet) Pos() int64 { return int64(p.c.pos) }

// Size is the payload size in bytes.
func (p *Packet) Size() int { return int(p.c.size) }

// IsKey reports AV_PKT_FLAG_KEY: a random access point.
func (p *Packet) IsKey() bool { return p.c.flags&C.AV_PKT_FLAG_KEY != 0 }

// IsDiscard reports AV_PKT_FLAG_DISCARD: decode it, but do not show the frame (edit lists).
func (p *Packet) IsDiscard() bool { return p.c.flags&C.AV_PKT_FLAG_DISCARD != 0 }

// IsCorrupt reports AV_PKT_FLAG_CORRUPT.
func (p *Packet) IsCorrupt() bool { return p.c.flags&C.AV_PKT_FLAG_CORRUPT != 0 }
