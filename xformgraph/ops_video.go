package xformgraph

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/newtricks/newtricks/xformgraph/ffmpeg"
	"github.com/newtricks/newtricks/xformgraph/video"
)

// Video ops. decode_video opens a clip (H.264, HEVC incl. 10-bit, VP9, VP8, AV1, MPEG-4),
// indexes it without decoding and decodes only the frames its sampling parameters select,
// seeking to the nearest preceding key frame for each; frames come out RGB24 in
// presentation order, rotated per the display matrix and optionally resized by swscale in
// the same pass. Their pixels are decord's: at native size bit for bit (and the ffmpeg
// CLI's), resized within 45 dB PSNR (docs/xformgraph.md, "Video pixels"). sample_frames picks frames from a stack. decode_video in mode all decodes
// nothing by itself: its value is a pendingClip (the opened, indexed clip), so that
// decode_video -> sample_frames decodes only the sampled frames, and any other consumer
// (or a graph output) gets every frame, decoded once.

// pendingClip is a frame stack not decoded yet.
type pendingClip interface {
	materialize() (Value, error)
}

// deferredClip is decode_video's value in mode all: an open reader (closed when the
// sample is done) and the frames mode all selects.
type deferredClip struct {
	ctx    context.Context // of the graph run
	r      *video.Reader
	idx    []int // every frame, presentation order
	out    video.Output
	w, h   int
	limit  int64 // output byte limit for the whole stack
	frames *Value
}

// materialize decodes every frame (once).
func (c *deferredClip) materialize() (Value, error) {
	if c.frames != nil {
		return *c.frames, nil
	}
	// Bound the frame stack before decoding: decoding every frame of a long clip at full
	// size would take gigabytes (sample in decode_video instead of after it).
	if size := int64(len(c.idx)) * int64(c.w) * int64(c.h) * 3; size > c.limit {
		return Value{}, fmt.Errorf("%w: %d frames of %dx%d RGB are %d bytes, limit %d (sample or resize in decode_video)",
			ErrLimit, len(c.idx), c.w, c.h, size, c.limit)
	}
	v, err := c.decode(c.idx)
	if err != nil {
		return Value{}, err
	}
	c.frames = &v
	return v, nil
}

// decode decodes the frames at presentation indices idx.
func (c *deferredClip) decode(idx []int) (Value, error) {
	frames, err := c.r.Frames(c.ctx, idx, c.out)
	if err != nil {
		return Value{}, videoErr(err)
	}
	stack := make([]*Image, len(frames))
	for i, f := range frames {
		stack[i] = &Image{Width: f.Width, Height: f.Height, Channels: 3, Stride: f.Width * 3, Pix: f.Pix}
	}
	return Value{Kind: KindFrames, Frames: stack}, nil
}

var samplingParams = []ParamSpec{
	{Name: "num", Type: ParamInt, Min: 0, Max: 1 << 16, Default: 8, Doc: "frames for uniform/random_segment; at most this many for stride/fps (0 = no cap)"},
	{Name: "stride", Type: ParamInt, Min: 1, Max: 1 << 20, Default: 1, Doc: "frame step for stride/random_segment"},
	{Name: "start", Type: ParamInt, Min: 0, Max: 1 << 30, Default: 0, Doc: "first frame for stride"},
	{Name: "indices", Type: ParamInts, Min: -(1 << 30), Max: 1 << 30, Default: []int64{}, Doc: "frames for mode indices; negative counts from the end"},
}

func init() {
	Register(OpDef{
		Name: "decode_video",
		Doc:  "decodes the frames of a video clip selected by mode (all, uniform, stride, fps, random_segment, indices, timestamps) as RGB24, rotation applied, optionally resized to width x height in the same pass",
		In:   []Kind{KindBytes}, Out: KindFrames,
		Params: append([]ParamSpec{
			{Name: "mode", Type: ParamString, Enum: []string{"all", "uniform", "stride", "fps", "random_segment", "indices", "timestamps"}, Default: "all"},
			{Name: "fps", Type: ParamFloat, Min: 0, Max: 1000, Default: 0.0, Doc: "frames per second for mode fps"},
			{Name: "timestamps", Type: ParamFloats, Min: 0, Max: 1e7, Default: []float64{}, Doc: "seconds from the first frame, for mode timestamps"},
			{Name: "width", Type: ParamInt, Min: 0, Max: maxSide, Default: 0, Doc: "output width after rotation; 0 keeps the native size (or the aspect ratio if height is set)"},
			{Name: "height", Type: ParamInt, Min: 0, Max: maxSide, Default: 0},
			{Name: "interpolation", Type: ParamString, Enum: []string{"bilinear", "bicubic", "area", "fast_bilinear"}, Default: "bilinear", Doc: "swscale filter for the resize; at native size it only decides the chroma rows swscale interpolates (odd heights, 10-bit): bilinear gives decord's bytes, bicubic the ffmpeg CLI's"},
		}, samplingParams...),
		Check: checkSampling,
		Infer: func(p Params, in Static) (Static, error) {
			return Static{Kind: KindFrames, T: staticFrames(p), W: int(p.Int("width")), H: int(p.Int("height")), Channels: 3}, nil
		},
		Run: runDecodeVideo,
	})
	Register(OpDef{
		Name: "sample_frames",
		Doc:  "picks frames from a decoded stack: uniform, stride, random_segment or indices (as decode_video's modes)",
		In:   []Kind{KindFrames}, Out: KindFrames, Lazy: true,
		Params: append([]ParamSpec{
			{Name: "mode", Type: ParamString, Enum: []string{"uniform", "stride", "random_segment", "indices"}, Default: "uniform"},
		}, samplingParams...),
		Check: checkSampling,
		Infer: func(p Params, in Static) (Static, error) {
			in.T = staticFrames(p)
			return in, nil
		},
		Run: runSampleFrames,
	})
}

func checkSampling(p Params) error {
	switch p.String("mode") {
	case "uniform", "random_segment":
		if p.Int("num") < 1 {
			return fmt.Errorf("%w: mode %s needs num >= 1", ErrBadParam, p.String("mode"))
		}
	case "fps":
		if p.Float("fps") <= 0 {
			return fmt.Errorf("%w: mode fps needs fps > 0", ErrBadParam)
		}
	case "indices":
		if len(p.Ints("indices")) == 0 {
			return fmt.Errorf("%w: mode indices needs indices", ErrBadParam)
		}
	case "timestamps":
		if len(p.Floats("timestamps")) == 0 {
			return fmt.Errorf("%w: mode timestamps needs timestamps", ErrBadParam)
		}
	}
	return nil
}

// staticFrames is the frame count known before running, or 0.
func staticFrames(p Params) int {
	switch p.String("mode") {
	case "uniform", "random_segment":
		return int(p.Int("num"))
	case "indices":
		return len(p.Ints("indices"))
	case "timestamps":
		return len(p.Floats("timestamps"))
	}
	return 0
}

func sampling(p Params) video.Sampling {
	s := video.Sampling{Mode: video.Mode(p.String("mode")), Num: int(p.Int("num")), Stride: int(p.Int("stride")),
		Start: int(p.Int("start")), FPS: p.Float("fps"), Times: p.Floats("timestamps")}
	for _, i := range p.Ints("indices") {
		s.Indices = append(s.Indices, int(i))
	}
	return s
}

var interpolations = map[string]ffmpeg.ScaleFlags{
	"bilinear": ffmpeg.ScaleBilinear, "bicubic": ffmpeg.ScaleBicubic,
	"area": ffmpeg.ScaleArea, "fast_bilinear": ffmpeg.ScaleFastBilinear,
}

// videoIndexes caches clip indexes in this process (see SetVideoIndexCache).
var videoIndexes atomic.Pointer[video.IndexCache]

func init() {
	var c video.IndexCache = video.NewMemoryIndexCache(4096)
	videoIndexes.Store(&c)
}

// SetVideoIndexCache replaces the cache decode_video keeps clip indexes in, so that a clip
// seen again is not demuxed again (default: an in-process LRU of 4096 clips; nil disables
// caching). Entries are keyed by video.CacheKey(sample key, bytes); a cached index that
// does not fit the input is rebuilt, so the cache never changes an output.
func SetVideoIndexCache(c video.IndexCache) {
	videoIndexes.Store(&c)
}

func runDecodeVideo(ctx context.Context, env *Env, in Value) (Value, error) {
	p := env.Params
	opts := video.Options{MaxPixels: env.Limits.MaxPixels}
	if c := *videoIndexes.Load(); c != nil {
		opts.Cache = c
	}
	r, err := video.OpenBytes(ctx, env.Key, in.Bytes, opts)
	if err != nil {
		return Value{}, videoErr(err)
	}
	deferred := false
	defer func() {
		if !deferred {
			r.Close()
		}
	}()
	idx, err := sampling(p).Select(r.Index(), func(n int) int { return IntN(env.Rand, n) }, env.Limits.MaxFrames)
	if err != nil {
		return Value{}, videoErr(&video.Error{Name: env.Key, Op: "sample", Err: err})
	}
	out := video.Output{Width: int(p.Int("width")), Height: int(p.Int("height")), Scale: interpolations[p.String("interpolation")]}
	w, h, err := r.OutputSize(out)
	if err != nil {
		return Value{}, videoErr(&video.Error{Name: env.Key, Op: "sample", Err: err})
	}
	c := &deferredClip{ctx: ctx, r: r, idx: idx, out: out, w: w, h: h, limit: env.Limits.MaxOutputBytes}
	if p.String("mode") == "all" {
		deferred = true
		env.OnDone(func() { r.Close() })
		return Value{Kind: KindFrames, clip: c}, nil
	}
	return c.materialize()
}

func runSampleFrames(ctx context.Context, env *Env, in Value) (Value, error) {
	clip, _ := in.clip.(*deferredClip)
	n := 0
	if clip != nil {
		n = len(clip.idx)
	} else {
		var err error
		if in, err = in.materialize(); err != nil {
			return Value{}, err
		}
		n = len(in.Frames)
	}
	// A stack has no timestamps: index it by position.
	ix := &video.Index{PTS: make([]int64, n), TimeBase: ffmpeg.Rational{Num: 1, Den: 1}}
	for i := range ix.PTS {
		ix.PTS[i] = int64(i)
	}
	idx, err := sampling(env.Params).Select(ix, func(n int) int { return IntN(env.Rand, n) }, env.Limits.MaxFrames)
	if err != nil {
		return Value{}, videoErr(err)
	}
	if clip != nil && clip.frames == nil {
		// Decode only the sampled frames.
		want := make([]int, len(idx))
		for k, i := range idx {
			want[k] = clip.idx[i]
		}
		if size := int64(len(want)) * int64(clip.w) * int64(clip.h) * 3; size > env.Limits.MaxOutputBytes {
			return Value{}, fmt.Errorf("%w: %d frames of %dx%d RGB are %d bytes, limit %d",
				ErrLimit, len(want), clip.w, clip.h, size, env.Limits.MaxOutputBytes)
		}
		return clip.decode(want)
	}
	if clip != nil {
		in = *clip.frames
	}
	out := make([]*Image, len(idx))
	for k, i := range idx {
		out[k] = in.Frames[i]
	}
	return Value{Kind: KindFrames, Frames: out}, nil
}

// videoErr wraps a video error in this package's sentinel for its class.
func videoErr(err error) error {
	var s error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, video.ErrCodec), errors.Is(err, video.ErrNoVideo):
		s = ErrUnsupported
	case errors.Is(err, video.ErrTooLarge), errors.Is(err, video.ErrLimit):
		s = ErrLimit
	case errors.Is(err, video.ErrFrameRange):
		s = ErrBadParam
	default:
		s = ErrDecode
	}
	return fmt.Errorf("%w: %w", s, err)
}
