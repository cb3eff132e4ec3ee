package ffmpeg

// #include "helpers.h"
import "C"

// DecoderOptions configure a decoder. Zero values keep FFmpeg's defaults except Threads.
type DecoderOptions struct {
	// Threads is AVCodecContext.thread_count: 0 lets FFmpeg pick one per core, 1 decodes
	// on the calling thread (the benchmark setting).
	Threads int
	// SliceThreadsOnly restricts threading to slices (no frame-thread latency).
	SliceThreadsOnly bool
	// Lowres asks decoders that support it (mjpeg) to decode at 1/2^Lowres scale; clamped to
	// the codec's maximum.
	Lowres int
	// MaxPixels makes the decoder reject pictures larger than this (AVCodecContext.max_pixels).
	MaxPixels int64
}

// CodecContext is an opened decoder (AVCodecContext).
type CodecContext struct {
	c *C.AVCodecContext
}

// NewStreamDecoder opens a decoder for stream of f, configured from the stream parameters.
func NewStreamDecoder(f *FormatContext, stream int, opts DecoderOptions) (*CodecContext, error) {
	if f.c == nil {
		return nil, ErrClosed
	}
	return newDecoder(f.c.fmt, stream, CodecNone, opts)
}

// NewDecoder opens a decoder for codec id without stream parameters (e.g. for still
// images, whose bitstream is self-describing).
func NewDecoder(id CodecID, opts DecoderOptions) (*CodecContext, error) {
	return newDecoder(nil, -1, id, opts)
}

func newDecoder(fmt *C.AVFormatContext, stream int, id CodecID, opts DecoderOptions) (*CodecContext, error) {
	tt := 0
	if opts.SliceThreadsOnly {
		tt = C.FF_THREAD_SLICE
	}
	res := C.nt_decoder_open(fmt, C.int(stream), C.int(id), C.int(opts.Threads), C.int(tt),
		C.int(opts.Lowres), C.int64_t(opts.MaxPixels))
	if res.err < 0 {
		return nil, Error(res.err)
	}
	return &CodecContext{c: res.c}, nil
}

// Close frees the decoder. Safe to call more than once.
func (c *CodecContext) Close() {
	if c.c != nil {
		C.nt_codec_free(c.c)
		c.c = nil
	}
}

// Codec is the decoder's codec id.
func (c *CodecContext) Codec() CodecID { return CodecID(c.c.codec_id) }

// SendPacket feeds one packet; nil starts draining. ErrAgain means ReceiveFrame must be
// called first.
func (c *CodecContext) SendPacket(p *Packet) error {
	if c.c == nil {
		return ErrClosed
	}
	if p == nil {
		return newError(C.avcodec_send_packet(c.c, nil))
	}
	return newError(C.avcodec_send_packet(c.c, p.c))
}

// ReceiveFrame returns the next decoded frame into f: ErrAgain when the decoder needs more
// input, ErrEOF when it is fully drained.
func (c *CodecContext) ReceiveFrame(f *Frame) error {
	if c.c == nil {
		return ErrClosed
	}
	return newError(C.avcodec_receive_frame(c.c, f.c))
}

// Flush drops buffered frames and resets the decoder (after a seek or a drain).
func (c *CodecContext) Flush() { C.avcodec_flush_buffers(c.c) }

// Discard is an AVDiscard level for SetSkipFrame.
type Discard int

// Discard levels.
const (
	DiscardDefault Discard = C.AVDISCARD_DEFAULT
	DiscardNonRef  Discard = C.AVDISCARD_NONREF // skip frames no other frame references
	DiscardNonKey  Discard = C.AVDISCARD_NONKEY
)

// SetSkipFrame sets AVCodecContext.skip_frame: frames at or below d are not decoded. It may
// change between packets (with Threads == 1) to skip unreferenced frames nobody wants.
func (c *CodecContext) SetSkipFrame(d Discard) { c.c.skip_frame = int32(d) }
