package video

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/newtricks/newtricks/xformgraph/ffmpeg"
)

// Index is a clip's frame table, built by demuxing every packet of the video stream once,
// without decoding. Frames are in presentation order. It is immutable once built and can be
// shared, serialized (MarshalBinary) and cached.
type Index struct {
	Codec    ffmpeg.CodecID
	Width    int // coded width before rotation
	Height   int
	TimeBase ffmpeg.Rational
	// Rotation is the clockwise rotation (0, 90, 180, 270) applied to decoded frames.
	Rotation int
	// PTS holds the presentation timestamp of every frame, ascending, in TimeBase.
	PTS []int64
	// Keys lists the random access points: Frame is the presentation index of the key
	// frame, Seek the timestamp to hand to the demuxer to land on it.
	Keys []Key
	// Sequential is set when the stream lacks usable timestamps: frames are then numbered
	// in decoder output order and every sample decodes from the start.
	Sequential bool
	// InputSize is the byte size of the input the index was built from (a sanity check for
	// cached indexes).
	InputSize int64
	// SeekByPTS records that Key.Seek holds pts (what mov and matroska search by) rather
	// than dts.
	SeekByPTS bool
}

// Key is one random access point.
type Key struct {
	Frame int   // presentation index
	Seek  int64 // timestamp for av_seek_frame (dts or pts, see Index.SeekByPTS)
}

// NumFrames is the number of frames in the clip.
func (ix *Index) NumFrames() int { return len(ix.PTS) }

// Time is frame i's presentation time in seconds from the first frame.
func (ix *Index) Time(i int) float64 {
	return float64(float64(ix.PTS[i]-ix.PTS[0]) * ix.TimeBase.Float())
}

// Duration is the time from the first frame to the end of the last one, estimating the
// last frame's duration from the mean frame interval.
func (ix *Index) Duration() float64 {
	n := len(ix.PTS)
	if n == 0 {
		return 0
	}
	if n == 1 {
		return 0
	}
	last := ix.Time(n - 1)
	return last + last/float64(n-1)
}

// FrameAt is the frame shown at time t (seconds from the first frame): the last frame
// whose time is <= t. It returns -1 when t is before the first frame or after Duration.
func (ix *Index) FrameAt(t float64) int {
	n := len(ix.PTS)
	if n == 0 || t < 0 || t > ix.Duration()+1e-9 {
		return -1
	}
	tb := ix.TimeBase.Float()
	if tb <= 0 {
		return -1
	}
	// The pts at t, rounded to absorb float error in t.
	p := ix.PTS[0] + int64(math.Floor(t/tb+1e-6))
	i := sort.Search(n, func(i int) bool { return ix.PTS[i] > p }) - 1
	if i < 0 {
		i = 0
	}
	return i
}

// lookup returns the presentation index of the frame with timestamp pts, or -1.
func (ix *Index) lookup(pts int64) int {
	i := sort.Search(len(ix.PTS), func(i int) bool { return ix.PTS[i] >= pts })
	if i < len(ix.PTS) && ix.PTS[i] == pts {
		return i
	}
	return -1
}

// keyFor returns the position in Keys of the last key frame at or before frame i, or -1.
func (ix *Index) keyFor(i int) int {
	return sort.Search(len(ix.Keys), func(k int) bool { return ix.Keys[k].Frame > i }) - 1
}

// packetEntry is one demuxed packet, in decode order.
type packetEntry struct {
	pts, dts int64
	key      bool
}

// buildIndex turns the demuxed packets into presentation order.
func buildIndex(pk []packetEntry, ix *Index) {
	ix.PTS = ix.PTS[:0]
	ix.Keys = ix.Keys[:0]
	ix.Sequential = false
	for _, p := range pk {
		if p.pts == ffmpeg.NoPTS {
			ix.Sequential = true
			break
		}
		ix.PTS = append(ix.PTS, p.pts)
	}
	if !ix.Sequential {
		sort.Slice(ix.PTS, func(a, b int) bool { return ix.PTS[a] < ix.PTS[b] })
		for i := 1; i < len(ix.PTS); i++ {
			if ix.PTS[i] == ix.PTS[i-1] {
				ix.Sequential = true // duplicate timestamps: frames are not identifiable by pts
				break
			}
		}
	}
	if ix.Sequential {
		// Number frames by output order; timestamps are synthesized from the packet
		// count so Time/FrameAt stay usable, but seeking is disabled.
		ix.PTS = ix.PTS[:0]
		for i := range pk {
			ix.PTS = append(ix.PTS, int64(i))
		}
		ix.Keys = append(ix.Keys, Key{Frame: 0, Seek: math.MinInt64})
		return
	}
	for _, p := range pk {
		if !p.key {
			continue
		}
		seek := p.dts
		if ix.SeekByPTS || seek == ffmpeg.NoPTS {
			seek = p.pts
		}
		if f := ix.lookup(p.pts); f >= 0 {
			ix.Keys = append(ix.Keys, Key{Frame: f, Seek: seek})
		}
	}
	sort.Slice(ix.Keys, func(a, b int) bool { return ix.Keys[a].Frame < ix.Keys[b].Frame })
	if len(ix.Keys) == 0 || ix.Keys[0].Frame != 0 {
		// Frames before the first flagged key frame are reachable only from the start.
		ix.Keys = append([]Key{{Frame: 0, Seek: math.MinInt64}}, ix.Keys...)
	}
}

const indexMagic = "NTVIDX01"

// MarshalBinary encodes the index: magic, header varints, then delta-coded pts and keys.
func (ix *Index) MarshalBinary() ([]byte, error) {
	b := []byte(indexMagic)
	flags := uint64(0)
	if ix.Sequential {
		flags |= 1
	}
	if ix.SeekByPTS {
		flags |= 2
	}
	for _, v := range []uint64{uint64(ix.Codec), uint64(ix.Width), uint64(ix.Height),
		uint64(ix.Rotation), flags, uint64(ix.InputSize), uint64(len(ix.PTS)), uint64(len(ix.Keys))} {
		b = binary.AppendUvarint(b, v)
	}
	b = binary.AppendVarint(b, int64(ix.TimeBase.Num))
	b = binary.AppendVarint(b, int64(ix.TimeBase.Den))
	prev := int64(0)
	for _, p := range ix.PTS {
		b = binary.AppendVarint(b, p-prev)
		prev = p
	}
	for _, k := range ix.Keys {
		b = binary.AppendUvarint(b, uint64(k.Frame))
		b = binary.AppendVarint(b, k.Seek)
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary produced; malformed input gives ErrBadIndex.
func (ix *Index) UnmarshalBinary(b []byte) error {
	bad := func(what string) error { return fmt.Errorf("%w: %s", ErrBadIndex, what) }
	if len(b) < len(indexMagic) || string(b[:len(indexMagic)]) != indexMagic {
		return bad("magic")
	}
	b = b[len(indexMagic):]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	sv := func() (int64, bool) {
		v, n := binary.Varint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	var h [8]uint64
	for i := range h {
		v, ok := uv()
		if !ok {
			return bad("header")
		}
		h[i] = v
	}
	nf, nk := h[6], h[7]
	if nf > uint64(len(b)) || nk > uint64(len(b)) || h[1] > 1<<20 || h[2] > 1<<20 {
		return bad("counts")
	}
	num, ok1 := sv()
	den, ok2 := sv()
	if !ok1 || !ok2 || num <= 0 || den <= 0 || num > math.MaxInt32 || den > math.MaxInt32 {
		return bad("time base")
	}
	out := Index{Codec: ffmpeg.CodecID(h[0]), Width: int(h[1]), Height: int(h[2]), Rotation: int(h[3]),
		Sequential: h[4]&1 != 0, SeekByPTS: h[4]&2 != 0, InputSize: int64(h[5]),
		TimeBase: ffmpeg.Rational{Num: int(num), Den: int(den)}}
	out.PTS = make([]int64, nf)
	prev := int64(0)
	for i := range out.PTS {
		d, ok := sv()
		if !ok {
			return bad("pts")
		}
		prev += d
		out.PTS[i] = prev
		if i > 0 && out.PTS[i] <= out.PTS[i-1] {
			return bad("pts not ascending")
		}
	}
	out.Keys = make([]Key, nk)
	for i := range out.Keys {
		f, ok1 := uv()
		s, ok2 := sv()
		if !ok1 || !ok2 || f >= nf || (i > 0 && int(f) < out.Keys[i-1].Frame) {
			return bad("keys")
		}
		out.Keys[i] = Key{Frame: int(f), Seek: s}
	}
	if len(b) != 0 {
		return bad("trailing bytes")
	}
	if nk == 0 || out.Keys[0].Frame != 0 {
		return bad("no key at frame 0")
	}
	switch out.Rotation {
	case 0, 90, 180, 270:
	default:
		return bad("rotation")
	}
	*ix = out
	return nil
}
