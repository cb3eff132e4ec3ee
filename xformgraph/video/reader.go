package video

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"

	"github.com/newtricks/newtricks/xformgraph/ffmpeg"
)

// Reader decodes frames of one clip. It is not safe for concurrent use; Close releases
// every FFmpeg object it holds. Once a call has failed because its context ended, the
// demuxer stays interrupted: close the Reader.
type Reader struct {
	name   string
	opts   Options
	mu     sync.Mutex // guards fc against Interrupt racing Close
	fc     *ffmpeg.FormatContext
	dec    *ffmpeg.CodecContext
	pkt    *ffmpeg.Packet
	frm    *ffmpeg.Frame
	rot    *ffmpeg.Frame // rotated copy of frm (lazily allocated)
	sws    *ffmpeg.SwsContext
	img    *ffmpeg.Image
	stream int
	info   ffmpeg.StreamInfo
	ix     *Index

	// Decoder position.
	positioned bool // a seek happened since the index pass
	curKey     int  // position in ix.Keys of the last seek
	lastOut    int  // presentation index of the last frame out of the decoder, -1 after a seek
	outCount   int  // frames out since the last seek (Sequential numbering)
	draining   bool // the demuxer hit EOF and the decoder is being drained
	checkLand  bool // the next packet read shows where the seek landed
	// damaged: since the last seek or clean key frame the decoder rejected a packet or
	// returned an error, or the last frame out was flagged: frames out now may carry
	// concealed errors (ErrConcealed).
	damaged bool

	stats Stats
}

// Stats count the work a Reader did since it was opened.
type Stats struct {
	Seeks   int // demuxer seeks
	Packets int // packets sent to the decoder
	Frames  int // frames out of the decoder (skipped unreferenced frames are not counted)
	// CachedIndex: the index came from Options.Cache (no demuxing pass).
	CachedIndex bool
}

// Stats returns the work done so far.
func (r *Reader) Stats() Stats { return r.stats }

// OpenBytes opens a clip held in memory (a whole file); name identifies it in errors.
// The bytes are copied into C memory, so data may be reused after OpenBytes returns. The
// index is built (or taken from opts.Index) before OpenBytes returns.
func OpenBytes(ctx context.Context, name string, data []byte, opts Options) (*Reader, error) {
	if len(data) == 0 {
		return nil, &Error{Name: name, Op: "open", Err: ErrEmpty}
	}
	o := opts.withDefaults()
	if o.Index == nil && o.Cache != nil {
		if o.CacheKey == "" {
			o.CacheKey = CacheKey(name, data)
		}
		if b := o.Cache.Get(o.CacheKey); b != nil {
			var ix Index
			if ix.UnmarshalBinary(b) == nil {
				o.Index, o.cached = &ix, true
			}
		}
	}
	fc, err := ffmpeg.OpenBytes(ctx, data, ffmpeg.InputOptions{ProbeSize: o.ProbeSize, AnalyzeDuration: o.AnalyzeDuration, Formats: o.Formats})
	return open(ctx, name, int64(len(data)), fc, err, o)
}

// OpenFile opens the clip at path.
func OpenFile(ctx context.Context, path string, opts Options) (*Reader, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &Error{Name: path, Op: "open", Err: err}
	}
	if st.Size() == 0 {
		return nil, &Error{Name: path, Op: "open", Err: ErrEmpty}
	}
	o := opts.withDefaults()
	fc, err := ffmpeg.OpenFile(ctx, path, ffmpeg.InputOptions{ProbeSize: o.ProbeSize, AnalyzeDuration: o.AnalyzeDuration, Formats: o.Formats})
	return open(ctx, path, st.Size(), fc, err, o)
}

func open(ctx context.Context, name string, size int64, fc *ffmpeg.FormatContext, err error, o Options) (_ *Reader, rerr error) {
	fail := func(op string, sentinel error, cause error) error {
		if cause == nil {
			return &Error{Name: name, Op: op, Err: sentinel}
		}
		if errors.Is(cause, ffmpeg.ErrExit) && ctx.Err() != nil {
			cause = ctx.Err()
		}
		return &Error{Name: name, Op: op, Err: fmt.Errorf("%w: %w", sentinel, cause)}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, &Error{Name: name, Op: "open", Err: ctx.Err()}
		}
		return nil, fail("open", ErrFormat, err)
	}
	r := &Reader{name: name, opts: o, fc: fc, stream: -1}
	defer func() {
		if rerr != nil {
			r.Close()
		}
	}()
	stop := context.AfterFunc(ctx, r.interrupt)
	defer stop()

	st, err := fc.BestVideoStream()
	if err != nil {
		if errors.Is(err, ffmpeg.ErrStreamNotFound) || errors.Is(err, ffmpeg.ErrDecoderNotFound) {
			return nil, fail("open", ErrNoVideo, nil)
		}
		return nil, fail("open", ErrFormat, err)
	}
	r.stream = st
	if r.info, err = fc.Stream(st); err != nil {
		return nil, fail("open", ErrFormat, err)
	}
	if !slices.Contains(o.Codecs, r.info.Codec) {
		return nil, fail("open", ErrCodec, fmt.Errorf("codec %s", r.info.Codec))
	}
	if r.info.Width <= 0 || r.info.Height <= 0 {
		// Container headers lack the geometry (elementary streams): probe, bounded by
		// ProbeSize/AnalyzeDuration.
		if err := fc.FindStreamInfo(); err != nil {
			return nil, fail("open", ErrFormat, err)
		}
		if r.info, err = fc.Stream(st); err != nil {
			return nil, fail("open", ErrFormat, err)
		}
	}
	w, h := int64(r.info.Width), int64(r.info.Height)
	if w <= 0 || h <= 0 {
		return nil, fail("open", ErrFormat, fmt.Errorf("no frame size"))
	}
	if w*h > o.MaxPixels || w > 1<<15 || h > 1<<15 {
		return nil, fail("open", ErrTooLarge, fmt.Errorf("%dx%d, limit %d pixels", w, h, o.MaxPixels))
	}
	fc.DiscardOtherStreams(st)
	r.dec, err = ffmpeg.NewStreamDecoder(fc, st, ffmpeg.DecoderOptions{Threads: o.Threads, MaxPixels: o.MaxPixels})
	if err != nil {
		if errors.Is(err, ffmpeg.ErrDecoderNotFound) {
			return nil, fail("open", ErrCodec, err)
		}
		return nil, fail("open", ErrCorrupt, err)
	}
	if r.pkt, err = ffmpeg.NewPacket(); err != nil {
		return nil, fail("open", err, nil)
	}
	if r.frm, err = ffmpeg.NewFrame(); err != nil {
		return nil, fail("open", err, nil)
	}
	if o.Index != nil {
		ix := o.Index
		if ix.InputSize == size && ix.Codec == r.info.Codec && ix.Width == r.info.Width && ix.Height == r.info.Height {
			r.ix = ix
			r.stats.CachedIndex = o.cached
			return r, nil
		}
		if !o.cached {
			return nil, fail("index", ErrBadIndex, fmt.Errorf("index of a %d-byte %s %dx%d clip, input is %d-byte %s %dx%d",
				ix.InputSize, ix.Codec, ix.Width, ix.Height, size, r.info.Codec, r.info.Width, r.info.Height))
		}
		// A cached index that does not fit this input: build a new one.
	}
	if err := r.buildIndex(ctx, size); err != nil {
		return nil, err
	}
	if o.Cache != nil && o.CacheKey != "" {
		if b, err := r.ix.MarshalBinary(); err == nil {
			o.Cache.Put(o.CacheKey, b)
		}
	}
	return r, nil
}

func (r *Reader) interrupt() {
	r.mu.Lock()
	if r.fc != nil {
		r.fc.Interrupt()
	}
	r.mu.Unlock()
}

// Close releases the FFmpeg objects. Safe to call more than once.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sws != nil {
		r.sws.Free()
	}
	if r.img != nil {
		r.img.Free()
	}
	if r.frm != nil {
		r.frm.Free()
	}
	if r.rot != nil {
		r.rot.Free()
	}
	if r.pkt != nil {
		r.pkt.Free()
	}
	if r.dec != nil {
		r.dec.Close()
	}
	if r.fc != nil {
		r.fc.Close()
		r.fc = nil
	}
	return nil
}

// Name is the name given at open.
func (r *Reader) Name() string { return r.name }

// Index is the clip's frame index.
func (r *Reader) Index() *Index { return r.ix }

// Stream is the video stream's parameters.
func (r *Reader) Stream() ffmpeg.StreamInfo { return r.info }

func rotationCW(info ffmpeg.StreamInfo) int {
	if !info.HasRotation {
		return 0
	}
	// av_display_rotation_get is counter-clockwise; the ffmpeg CLI rotates frames
	// clockwise by its negation, rounded to a multiple of 90.
	d := int(math.Round(-info.Rotation/90)) * 90 % 360
	if d < 0 {
		d += 360
	}
	return d
}

func (r *Reader) buildIndex(ctx context.Context, size int64) error {
	ix := &Index{Codec: r.info.Codec, Width: r.info.Width, Height: r.info.Height, TimeBase: r.info.TimeBase,
		Rotation: rotationCW(r.info), InputSize: size}
	// mov and matroska search their seek index by pts (mov converts to its dts timeline
	// itself); seeking mov by dts lands a key frame early when B-frames shift dts.
	ix.SeekByPTS = true
	var pk []packetEntry
	for n := 0; ; n++ {
		if n >= r.opts.MaxPackets {
			return &Error{Name: r.name, Op: "index", Err: fmt.Errorf("%w: more than %d packets", ErrLimit, r.opts.MaxPackets)}
		}
		if n&255 == 0 && ctx.Err() != nil {
			return &Error{Name: r.name, Op: "index", Err: ctx.Err()}
		}
		err := r.fc.ReadPacket(r.pkt)
		if err != nil {
			if errors.Is(err, ffmpeg.ErrExit) && ctx.Err() != nil {
				return &Error{Name: r.name, Op: "index", Err: ctx.Err()}
			}
			if errors.Is(err, ffmpeg.ErrEOF) || len(pk) > 0 {
				break // a truncated tail: keep the frames before it
			}
			return &Error{Name: r.name, Op: "index", Err: fmt.Errorf("%w: %w", ErrCorrupt, err)}
		}
		if r.pkt.StreamIndex() != r.stream || r.pkt.IsDiscard() {
			continue
		}
		pk = append(pk, packetEntry{pts: r.pkt.PTS(), dts: r.pkt.DTS(), key: r.pkt.IsKey()})
	}
	r.pkt.Unref()
	if len(pk) == 0 {
		return &Error{Name: r.name, Op: "index", Err: fmt.Errorf("%w: no video packets", ErrCorrupt)}
	}
	buildIndex(pk, ix)
	r.ix = ix
	return nil
}

// OutputSize is the size of the frames Frames delivers for out (after rotation).
func (r *Reader) OutputSize(out Output) (w, h int, err error) {
	w, h, _, _, _, err = r.outSize(out)
	return w, h, err
}

// outSize returns the delivered size (after rotation) and the scaled size before rotation.
func (r *Reader) outSize(out Output) (w, h, sw, sh int, rot int, err error) {
	if !out.NoRotate {
		rot = r.ix.Rotation
	}
	nw, nh := r.info.Width, r.info.Height
	if rot == 90 || rot == 270 {
		nw, nh = nh, nw
	}
	w, h = out.Width, out.Height
	switch {
	case w <= 0 && h <= 0:
		w, h = nw, nh
	case w <= 0:
		w = max(1, int(math.Round(float64(h)*float64(nw)/float64(nh))))
	case h <= 0:
		h = max(1, int(math.Round(float64(w)*float64(nh)/float64(nw))))
	}
	if int64(w)*int64(h) > r.opts.MaxPixels {
		return 0, 0, 0, 0, 0, fmt.Errorf("%w: output %dx%d", ErrTooLarge, w, h)
	}
	sw, sh = w, h
	if rot == 90 || rot == 270 {
		sw, sh = h, w
	}
	return w, h, sw, sh, rot, nil
}

// Frames decodes the frames at the given presentation indices (any order, repeats
// allowed) and returns them in the same order. Negative indices count from the end.
func (r *Reader) Frames(ctx context.Context, indices []int, out Output) ([]Frame, error) {
	n := r.ix.NumFrames()
	want := make([]int, len(indices))
	for k, i := range indices {
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return nil, &Error{Name: r.name, Op: "sample", Err: fmt.Errorf("%w: frame %d of %d", ErrFrameRange, indices[k], n)}
		}
		want[k] = i
	}
	w, h, sw, sh, rot, err := r.outSize(out)
	if err != nil {
		return nil, &Error{Name: r.name, Op: "sample", Err: err}
	}
	flags := out.Scale
	if flags == 0 {
		flags = ffmpeg.ScaleBilinear
	}
	got := make(map[int]*Frame, len(want))
	err = r.decode(ctx, want, func(i int) error {
		src, post := r.frm, rot
		if rot != 0 {
			// Rotate the decoded planes first, then scale, as the ffmpeg CLI does (the
			// two orders differ by several dB after a resize).
			if r.rot == nil {
				var err error
				if r.rot, err = ffmpeg.NewFrame(); err != nil {
					return err
				}
			}
			if err := r.frm.RotateInto(r.rot, rot); err == nil {
				src, post = r.rot, 0
			}
		}
		tw, th := w, h
		if post != 0 {
			tw, th = sw, sh
		}
		if err := r.scale(src, tw, th, flags); err != nil {
			return err
		}
		pix := make([]byte, r.img.Len())
		r.img.Copy(pix)
		if post != 0 {
			pix = rotate(pix, sw, sh, post)
		}
		got[i] = &Frame{Index: i, PTS: r.ix.PTS[i], Time: r.ix.Time(i), Width: w, Height: h, Pix: pix}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := make([]Frame, len(want))
	for k, i := range want {
		res[k] = *got[i]
	}
	return res, nil
}

// scale converts src into r.img (RGB24, sw x sh), reusing the scaler when it fits (same
// geometry, formats and flags).
func (r *Reader) scale(src *ffmpeg.Frame, sw, sh int, flags ffmpeg.ScaleFlags) error {
	fw, fh, pf := src.Width(), src.Height(), src.PixFmt()
	if r.sws == nil || !r.sws.Matches(fw, fh, pf, sw, sh, ffmpeg.PixFmtRGB24, flags) {
		if r.sws != nil {
			r.sws.Free()
		}
		var err error
		if r.sws, err = ffmpeg.NewSwsContext(fw, fh, pf, sw, sh, ffmpeg.PixFmtRGB24, flags); err != nil {
			return err
		}
	}
	if r.img == nil || r.img.Width() != sw || r.img.Height() != sh {
		if r.img != nil {
			r.img.Free()
		}
		var err error
		if r.img, err = ffmpeg.NewImage(sw, sh, ffmpeg.PixFmtRGB24); err != nil {
			return err
		}
	}
	return r.sws.ScaleFrame(src, r.img)
}

// DecodeAll decodes every frame from the start, calling fn with each frame's
// presentation index and the decoded picture (valid only during the call). It returns the
// number of frames decoded.
func (r *Reader) DecodeAll(ctx context.Context, fn func(i int, f *ffmpeg.Frame) error) (int, error) {
	stop := context.AfterFunc(ctx, r.interrupt)
	defer stop()
	if err := r.seek(-1); err != nil {
		return 0, &Error{Name: r.name, Op: "decode", Err: err}
	}
	count := 0
	for {
		i, err := r.next(ctx, nil)
		if err == io.EOF {
			return count, nil
		}
		if err != nil {
			return count, &Error{Name: r.name, Op: "decode", Err: err}
		}
		if r.damaged {
			return count, &Error{Name: r.name, Op: "decode", Err: fmt.Errorf("%w: frame %d", ErrConcealed, i)}
		}
		count++
		if fn != nil {
			if err := fn(i, r.frm); err != nil {
				return count, err
			}
		}
	}
}

// decode delivers each wanted frame once to emit, while r.frm holds it.
func (r *Reader) decode(ctx context.Context, want []int, emit func(i int) error) error {
	stop := context.AfterFunc(ctx, r.interrupt)
	defer stop()
	sorted := slices.Clone(want)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	wanted := make(map[int]bool, len(sorted)) // false: wanted, not yet delivered
	for _, i := range sorted {
		wanted[i] = false
	}
	fail := func(err error) error {
		if errors.Is(err, ffmpeg.ErrExit) && ctx.Err() != nil {
			err = ctx.Err()
		}
		return &Error{Name: r.name, Op: "decode", Err: err}
	}
	for _, w := range sorted {
		if wanted[w] {
			continue
		}
		k := r.ix.keyFor(w)
		if r.ix.Sequential {
			k = 0
		}
		if !r.positioned || k != r.curKey || r.lastOut >= w {
			if err := r.seek(k); err != nil {
				return fail(err)
			}
		}
		for !wanted[w] {
			i, err := r.next(ctx, wanted)
			if err == io.EOF {
				return fail(fmt.Errorf("%w: frame %d not produced by the decoder", ErrCorrupt, w))
			}
			if err != nil {
				return fail(err)
			}
			if i < 0 {
				continue
			}
			if done, ok := wanted[i]; ok && !done {
				if r.damaged {
					return fail(fmt.Errorf("%w: frame %d", ErrConcealed, i))
				}
				if err := emit(i); err != nil {
					return fail(err)
				}
				wanted[i] = true
			}
			if i > w && !wanted[w] {
				return fail(fmt.Errorf("%w: frame %d missing (decoder went on to %d)", ErrCorrupt, w, i))
			}
		}
	}
	return nil
}

// seek positions the demuxer and decoder on key k (k < 0 or a synthetic key: the start).
func (r *Reader) seek(k int) error {
	r.stats.Seeks++
	var err error
	if k < 0 || r.ix.Keys[k].Seek == math.MinInt64 || r.ix.Sequential {
		err = r.fc.SeekStart(r.stream)
		r.checkLand = false
	} else {
		err = r.fc.SeekFrame(r.stream, r.ix.Keys[k].Seek, ffmpeg.SeekBackward)
		r.checkLand = true
		if err != nil {
			err = r.fc.SeekStart(r.stream)
			r.checkLand = false
		}
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	r.dec.Flush()
	r.dec.SetSkipFrame(ffmpeg.DiscardDefault)
	r.positioned, r.curKey, r.lastOut, r.outCount, r.draining = true, max(k, 0), -1, 0, false
	r.damaged = false
	return nil
}

// maxBadPackets bounds consecutive packets the decoder rejects before the clip is declared
// corrupt.
const maxBadPackets = 64

// next returns the presentation index of the next decoded frame (in r.frm), -1 for a frame
// not in the index, or io.EOF when the decoder is drained. wanted (may be nil) enables
// skipping unreferenced frames that are not wanted.
func (r *Reader) next(ctx context.Context, wanted map[int]bool) (int, error) {
	bad, reads := 0, 0
	skip := wanted != nil && !r.opts.NoSkip && r.opts.Threads == 1 && !r.ix.Sequential
	for iter := 0; iter < 4*r.opts.MaxPackets+1024; iter++ {
		err := r.dec.ReceiveFrame(r.frm)
		if err == nil {
			switch {
			case r.frm.Concealed():
				r.damaged = true
			case r.frm.IsKey():
				r.damaged = false // a clean key frame: nothing before it is referenced
			}
			r.stats.Frames++
			r.outCount++
			if r.ix.Sequential {
				r.lastOut = r.outCount - 1
				return r.lastOut, nil
			}
			i := r.ix.lookup(r.frm.BestEffortTimestamp())
			if i < 0 {
				i = r.ix.lookup(r.frm.PTS())
			}
			if i >= 0 {
				r.lastOut = i
			}
			return i, nil
		}
		if errors.Is(err, ffmpeg.ErrEOF) {
			r.positioned = false // drained: the next request must seek
			return -1, io.EOF
		}
		if !errors.Is(err, ffmpeg.ErrAgain) {
			r.damaged = true
			if bad++; bad > maxBadPackets {
				return -1, fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			continue
		}
		if r.draining {
			r.positioned = false
			return -1, io.EOF // a decoder that says EAGAIN while draining has nothing left
		}
		if reads++; reads&31 == 0 && ctx.Err() != nil {
			return -1, ctx.Err()
		}
		if err := r.fc.ReadPacket(r.pkt); err != nil {
			if errors.Is(err, ffmpeg.ErrExit) {
				return -1, err
			}
			r.draining = true
			if err := r.dec.SendPacket(nil); err != nil && !errors.Is(err, ffmpeg.ErrEOF) {
				return -1, fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			continue
		}
		if r.pkt.StreamIndex() != r.stream {
			continue
		}
		if r.checkLand {
			r.checkLand = false
			key := r.ix.PTS[r.ix.Keys[r.curKey].Frame]
			if p := r.pkt.PTS(); p != ffmpeg.NoPTS && p > key {
				// The demuxer landed after the key frame we asked for: start over from the
				// beginning, which is slow but always correct.
				if err := r.fc.SeekStart(r.stream); err != nil {
					return -1, fmt.Errorf("%w: %w", ErrCorrupt, err)
				}
				r.dec.Flush()
				continue
			}
		}
		if skip {
			i := r.ix.lookup(r.pkt.PTS())
			if done, ok := wanted[i]; ok && !done {
				r.dec.SetSkipFrame(ffmpeg.DiscardDefault)
			} else {
				r.dec.SetSkipFrame(ffmpeg.DiscardNonRef)
			}
		}
		r.stats.Packets++
		if err := r.dec.SendPacket(r.pkt); err != nil {
			if errors.Is(err, ffmpeg.ErrAgain) {
				return -1, fmt.Errorf("%w: decoder refused input with output pending", ErrCorrupt)
			}
			r.damaged = true
			if bad++; bad > maxBadPackets {
				return -1, fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
		}
	}
	return -1, fmt.Errorf("%w: decode loop bound reached", ErrLimit)
}

// rotate turns a packed RGB24 w x h picture clockwise by deg (90, 180, 270).
func rotate(src []byte, w, h, deg int) []byte {
	dst := make([]byte, len(src))
	switch deg {
	case 90: // out is h x w; out(x', y') = in(y', h-1-x')
		for y := 0; y < w; y++ {
			for x := 0; x < h; x++ {
				s := ((h-1-x)*w + y) * 3
				d := (y*h + x) * 3
				dst[d], dst[d+1], dst[d+2] = src[s], src[s+1], src[s+2]
			}
		}
	case 180:
		n := w * h
		for i := 0; i < n; i++ {
			s, d := i*3, (n-1-i)*3
			dst[d], dst[d+1], dst[d+2] = src[s], src[s+1], src[s+2]
		}
	case 270: // out(x', y') = in(w-1-y', x')
		for y := 0; y < w; y++ {
			for x := 0; x < h; x++ {
				s := (x*w + (w - 1 - y)) * 3
				d := (y*h + x) * 3
				dst[d], dst[d+1], dst[d+2] = src[s], src[s+1], src[s+2]
			}
		}
	default:
		copy(dst, src)
	}
	return dst
}
