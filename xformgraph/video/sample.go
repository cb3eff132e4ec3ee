package video

import (
	"fmt"
	"math"
)

// Mode names a sampling strategy.
type Mode string

// Sampling modes.
const (
	// Uniform picks Num frames at the centres of Num equal segments of the clip:
	// frame floor((2k+1)*N / (2*Num)) for k in [0, Num).
	Uniform Mode = "uniform"
	// Stride picks Start, Start+Stride, ... (at most Num frames when Num > 0).
	Stride Mode = "stride"
	// FPS picks the frame shown at each multiple of 1/FPS seconds from the first frame
	// (at most Num frames when Num > 0); a frame repeats when FPS exceeds the clip's rate.
	FPS Mode = "fps"
	// RandomSegment picks Num frames Stride apart starting at a random frame (from the
	// caller's deterministic generator); clips shorter than the segment repeat their last
	// frame.
	RandomSegment Mode = "random_segment"
	// Indices picks the frames listed in Indices (negative counts from the end).
	Indices Mode = "indices"
	// Timestamps picks the frame shown at each time in Times (seconds from the first
	// frame).
	Timestamps Mode = "timestamps"
	// All picks every frame.
	All Mode = "all"
)

// Sampling selects frames from a clip.
type Sampling struct {
	Mode    Mode
	Num     int
	Stride  int
	Start   int
	FPS     float64
	Indices []int
	Times   []float64
}

// Select returns the presentation indices chosen from ix. intn(n) must return a value in
// [0, n) from a deterministic generator; it is used by RandomSegment only. maxFrames (> 0)
// bounds the result.
func (s Sampling) Select(ix *Index, intn func(n int) int, maxFrames int) ([]int, error) {
	n := ix.NumFrames()
	if n == 0 {
		return nil, fmt.Errorf("%w: clip has no frames", ErrFrameRange)
	}
	limit := func(k int) error {
		if maxFrames > 0 && k > maxFrames {
			return fmt.Errorf("%w: %d frames requested, limit %d", ErrLimit, k, maxFrames)
		}
		return nil
	}
	var out []int
	switch s.Mode {
	case Uniform, "":
		if s.Num <= 0 {
			return nil, fmt.Errorf("%w: uniform sampling needs num > 0", ErrFrameRange)
		}
		if err := limit(s.Num); err != nil {
			return nil, err
		}
		for k := 0; k < s.Num; k++ {
			out = append(out, int((int64(2*k+1)*int64(n))/int64(2*s.Num)))
		}
	case Stride:
		st := max(s.Stride, 1)
		if s.Start < 0 || s.Start >= n {
			return nil, fmt.Errorf("%w: start %d of %d frames", ErrFrameRange, s.Start, n)
		}
		for i := s.Start; i < n && (s.Num <= 0 || len(out) < s.Num); i += st {
			out = append(out, i)
			if err := limit(len(out)); err != nil {
				return nil, err
			}
		}
	case FPS:
		if !(s.FPS > 0) || math.IsInf(s.FPS, 0) {
			return nil, fmt.Errorf("%w: fps %v", ErrFrameRange, s.FPS)
		}
		d := ix.Duration()
		for k := 0; s.Num <= 0 || len(out) < s.Num; k++ {
			t := float64(k) / s.FPS
			if t >= d-1e-6 && k > 0 { // the clip spans [0, Duration)
				break
			}
			i := ix.FrameAt(t)
			if i < 0 {
				break
			}
			out = append(out, i)
			if err := limit(len(out)); err != nil {
				return nil, err
			}
		}
	case RandomSegment:
		if s.Num <= 0 {
			return nil, fmt.Errorf("%w: random_segment needs num > 0", ErrFrameRange)
		}
		if err := limit(s.Num); err != nil {
			return nil, err
		}
		st := max(s.Stride, 1)
		span := (s.Num-1)*st + 1
		start := 0
		if span < n {
			start = intn(n - span + 1)
		}
		for k := 0; k < s.Num; k++ {
			out = append(out, min(start+k*st, n-1))
		}
	case Indices:
		if err := limit(len(s.Indices)); err != nil {
			return nil, err
		}
		for _, i := range s.Indices {
			j := i
			if j < 0 {
				j += n
			}
			if j < 0 || j >= n {
				return nil, fmt.Errorf("%w: frame %d of %d", ErrFrameRange, i, n)
			}
			out = append(out, j)
		}
	case Timestamps:
		if err := limit(len(s.Times)); err != nil {
			return nil, err
		}
		for _, t := range s.Times {
			i := ix.FrameAt(t)
			if i < 0 {
				return nil, fmt.Errorf("%w: time %gs of a %gs clip", ErrFrameRange, t, ix.Duration())
			}
			out = append(out, i)
		}
	case All:
		if err := limit(n); err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			out = append(out, i)
		}
	default:
		return nil, fmt.Errorf("%w: unknown sampling mode %q", ErrFrameRange, s.Mode)
	}
	return out, nil
}
