package ffmpeg

// #include "helpers.h"
// #include <stdlib.h>
import "C"

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// InputOptions bound what the demuxer may read or guess while opening an input. Zero
// fields keep FFmpeg's defaults.
type InputOptions struct {
	// Format forces a demuxer by short name ("mov", "matroska"...); empty probes.
	Format string
	// Formats is the allow-list of demuxers by short name: an input whose container probes
	// (or is forced) as anything else fails with ErrFormatRefused before its header is read.
	// Empty means DefaultFormats; AnyFormat allows every demuxer FFmpeg has (tests only).
	Formats []string
	// ProbeSize caps the bytes avformat_find_stream_info reads (AVFormatContext.probesize).
	ProbeSize int64
	// AnalyzeDuration caps the stream time analysed (AVFormatContext.max_analyze_duration).
	AnalyzeDuration time.Duration
	// FormatProbeSize caps the bytes read to guess the container (format_probesize).
	FormatProbeSize int
	// IOBufferSize is the custom AVIOContext buffer for in-memory inputs; default 64 KiB.
	IOBufferSize int
}

// DefaultFormats are the containers a sample may be in: the video extensions the dataset
// index recognises (mp4, mov, mkv, webm, avi). Anything else, in particular the demuxers that
// open further inputs by name (hls, concat/ffconcat, image2 sequences, dash, tee...), could
// make FFmpeg read files beside the process, so it is refused.
var DefaultFormats = []string{"mov", "matroska", "avi"}

// AnyFormat, as InputOptions.Formats, allows every demuxer.
var AnyFormat = []string{"*"}

// FormatContext is an opened input (AVFormatContext plus, for in-memory inputs, its
// custom AVIOContext and the C copy of the bytes).
type FormatContext struct {
	mu sync.Mutex // orders Interrupt (any goroutine) against Close
	c  *C.nt_input
}

// OpenFile opens the media file at path. Cancelling ctx interrupts the open (FFmpeg's
// interrupt callback); it has no effect once OpenFile has returned.
func OpenFile(ctx context.Context, path string, opts InputOptions) (*FormatContext, error) {
	in := C.nt_input_alloc(0)
	if in == nil {
		return nil, ErrNoMem
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	return open(ctx, in, cpath, opts)
}

// OpenBytes opens an in-memory input. data is copied once into C memory, so the caller may
// reuse it as soon as OpenBytes returns.
func OpenBytes(ctx context.Context, data []byte, opts InputOptions) (*FormatContext, error) {
	if len(data) == 0 {
		return nil, ErrInvalidData
	}
	in := C.nt_input_alloc(C.int64_t(len(data)))
	if in == nil {
		return nil, ErrNoMem
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(in.data)), len(data)), data)
	return open(ctx, in, nil, opts)
}

func open(ctx context.Context, in *C.nt_input, path *C.char, opts InputOptions) (*FormatContext, error) {
	var cformat *C.char
	if opts.Format != "" {
		cformat = C.CString(opts.Format)
		defer C.free(unsafe.Pointer(cformat))
	}
	allowed := opts.Formats
	if len(allowed) == 0 {
		allowed = DefaultFormats
	}
	var callowed *C.char
	if len(allowed) != 1 || allowed[0] != "*" {
		callowed = C.CString(strings.Join(allowed, ","))
		defer C.free(unsafe.Pointer(callowed))
	}
	buf := opts.IOBufferSize
	if buf <= 0 {
		buf = 64 << 10
	}
	f := &FormatContext{c: in}
	stop := context.AfterFunc(ctx, f.Interrupt)
	ret := C.nt_input_open(in, path, cformat, callowed, C.int64_t(opts.ProbeSize),
		C.int64_t(opts.AnalyzeDuration/time.Microsecond), C.int(opts.FormatProbeSize), C.int(buf))
	stop()
	if ret < 0 {
		if Error(ret) == ErrFormatRefused {
			name := C.GoString(&in.refused[0])
			f.Close()
			return nil, fmt.Errorf("%w: %q is not one of %s", ErrFormatRefused, name, strings.Join(allowed, ", "))
		}
		f.Close()
		if Error(ret) == ErrExit && ctx.Err() != nil {
			return nil, fmt.Errorf("ffmpeg: open: %w: %w", ctx.Err(), Error(ret))
		}
		return nil, Error(ret)
	}
	return f, nil
}

// Close releases the input. It is safe to call more than once, and concurrently with
// Interrupt.
func (f *FormatContext) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.c != nil {
		C.nt_input_free(f.c)
		f.c = nil
	}
}

// Interrupt makes the current and every later blocking call on f fail with ErrExit. It is
// the one method safe to call from another goroutine (e.g. from context.AfterFunc).
func (f *FormatContext) Interrupt() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.c != nil {
		C.nt_input_interrupt(f.c)
	}
}

// FindStreamInfo reads (and may decode) the start of the input to fill in stream parameters
// that the container headers lack; bounded by InputOptions.ProbeSize/AnalyzeDuration.
func (f *FormatContext) FindStreamInfo() error {
	if f.c == nil {
		return ErrClosed
	}
	return newError(C.avformat_find_stream_info(f.c.fmt, nil))
}

// FormatName is the demuxer's short name, e.g. "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm".
func (f *FormatContext) FormatName() string {
	if f.c == nil || f.c.fmt.iformat == nil {
		return ""
	}
	return C.GoString(f.c.fmt.iformat.name)
}

// NumStreams is the number of streams found so far.
func (f *FormatContext) NumStreams() int {
	if f.c == nil {
		return 0
	}
	return int(f.c.fmt.nb_streams)
}

// Stream returns a copy of stream i's parameters.
func (f *FormatContext) Stream(i int) (StreamInfo, error) {
	if f.c == nil {
		return StreamInfo{}, ErrClosed
	}
	res := C.nt_stream_info_get(f.c.fmt, C.int(i))
	if err := newError(res.err); err != nil {
		return StreamInfo{}, err
	}
	return streamInfo(&res.info), nil
}

// BestVideoStream picks the default video stream (av_find_best_stream); ErrStreamNotFound
// if there is none.
func (f *FormatContext) BestVideoStream() (int, error) {
	if f.c == nil {
		return -1, ErrClosed
	}
	ret := C.av_find_best_stream(f.c.fmt, C.AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
	if ret < 0 {
		return -1, Error(ret)
	}
	return int(ret), nil
}

// DiscardOtherStreams makes ReadPacket skip every stream but keep, so the demuxer does not
// allocate packets nobody wants.
func (f *FormatContext) DiscardOtherStreams(keep int) {
	if f.c != nil {
		C.nt_discard_others(f.c.fmt, C.int(keep))
	}
}

// ReadPacket reads the next packet into p (which is unreferenced first). It returns an
// error matching ErrEOF at the end of the input.
func (f *FormatContext) ReadPacket(p *Packet) error {
	if f.c == nil || p.c == nil {
		return ErrClosed
	}
	C.av_packet_unref(p.c)
	return newError(C.av_read_frame(f.c.fmt, p.c))
}

// SeekFlags are AVSEEK_FLAG_* values.
type SeekFlags int

// Seek flags.
const (
	SeekBackward SeekFlags = C.AVSEEK_FLAG_BACKWARD // seek to the key frame at or before ts
	SeekByte     SeekFlags = C.AVSEEK_FLAG_BYTE     // ts is a byte offset
	SeekAny      SeekFlags = C.AVSEEK_FLAG_ANY      // any frame, not only key frames
)

// SeekFrame seeks stream to timestamp ts (in the stream's time base) with av_seek_frame.
// Decoders must be flushed afterwards.
func (f *FormatContext) SeekFrame(stream int, ts int64, flags SeekFlags) error {
	if f.c == nil {
		return ErrClosed
	}
	if err := newError(C.av_seek_frame(f.c.fmt, C.int(stream), C.int64_t(ts), C.int(flags))); err != nil {
		return fmt.Errorf("seek stream %d to %d: %w", stream, ts, err)
	}
	return nil
}

// SeekStart rewinds to the beginning of the input, the way the ffmpeg CLI loops an input
// (avformat_seek_file to the start time over all streams). stream is unused and kept for
// symmetry with SeekFrame.
func (f *FormatContext) SeekStart(stream int) error {
	if f.c == nil {
		return ErrClosed
	}
	return newError(C.nt_seek_start(f.c.fmt))
}
