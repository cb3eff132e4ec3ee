package video

import (
	"time"

	"github.com/newtricks/newtricks/xformgraph/ffmpeg"
)

// Options configure a Reader. The zero value is usable: zero fields take the defaults.
type Options struct {
	// Threads is the decoder thread count; default 1 (parallelism is across samples).
	Threads int
	// MaxPixels rejects streams whose width*height exceeds it, before any decoding;
	// default 64 Mpx. Also passed to the decoder (AVCodecContext.max_pixels).
	MaxPixels int64
	// MaxPackets bounds the packets demuxed while indexing; default 1<<20.
	MaxPackets int
	// Codecs lists the accepted codecs; default H.264, HEVC, VP9, VP8, AV1, MPEG-4.
	Codecs []ffmpeg.CodecID
	// Formats lists the accepted containers (FFmpeg demuxer names); default
	// ffmpeg.DefaultFormats (mp4/mov, matroska/webm, avi). Other containers fail with ErrFormat
	// wrapping ffmpeg.ErrFormatRefused before their header is read.
	Formats []string
	// ProbeSize and AnalyzeDuration bound container probing (see ffmpeg.InputOptions);
	// defaults 5 MB and 5 s.
	ProbeSize       int64
	AnalyzeDuration time.Duration
	// NoSkip disables skipping unreferenced frames that are not wanted (a speed-up that
	// changes nothing in the output; the switch exists for comparisons).
	NoSkip bool
	// Index, if set, is a cached index of this input; it is used instead of demuxing.
	Index *Index
	// Cache, if set (and Index is not), is asked for the index before demuxing and given
	// the index built otherwise. CacheKey names the clip in it; empty means
	// CacheKey(name, data) (OpenBytes only).
	Cache    IndexCache
	CacheKey string

	cached bool // Index came from Cache: rebuild rather than fail when it does not fit
}

// DefaultCodecs are the codecs accepted when Options.Codecs is empty.
var DefaultCodecs = []ffmpeg.CodecID{ffmpeg.CodecH264, ffmpeg.CodecHEVC, ffmpeg.CodecVP9,
	ffmpeg.CodecVP8, ffmpeg.CodecAV1, ffmpeg.CodecMPEG4}

func (o Options) withDefaults() Options {
	if o.Threads <= 0 {
		o.Threads = 1
	}
	if o.MaxPixels <= 0 {
		o.MaxPixels = 64 << 20
	}
	if o.MaxPackets <= 0 {
		o.MaxPackets = 1 << 20
	}
	if len(o.Codecs) == 0 {
		o.Codecs = DefaultCodecs
	}
	if o.ProbeSize <= 0 {
		o.ProbeSize = 5 << 20
	}
	if o.AnalyzeDuration <= 0 {
		o.AnalyzeDuration = 5 * time.Second
	}
	return o
}

// Output says how decoded frames are delivered.
type Output struct {
	// Width and Height of the delivered frames, after rotation. Zero keeps the native
	// size; one zero keeps the aspect ratio.
	Width, Height int
	// Scale is the swscale interpolation; default bilinear.
	Scale ffmpeg.ScaleFlags
	// NoRotate delivers frames as coded, ignoring the display matrix.
	NoRotate bool
}

// Frame is one decoded RGB24 frame.
type Frame struct {
	Index         int     // presentation index in the clip
	PTS           int64   // in Index.TimeBase
	Time          float64 // seconds from the first frame
	Width, Height int
	Pix           []byte // RGB24, tightly packed rows
}
