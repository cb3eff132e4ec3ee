// Package stats holds the order statistics every benchmark reports: medians of interleaved
// repetitions with their range, and nearest-rank percentiles of per-step samples. One
// definition for all benchmarks, so a "P99" or a "median (min, max)" means the same in every
// BENCH line.
package stats

import (
	"math"
	"slices"
	"time"
)

// Number is what the statistics take: plain numbers and durations.
type Number interface {
	~int | ~int64 | ~float64
}

// Sorted returns a sorted copy of v.
func Sorted[T Number](v []T) []T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// Median is the middle value of v (the mean of the two middle values for an even count); 0
// for no values.
func Median[T Number](v []T) T {
	med, _, _ := Range(v)
	return med
}

// Range returns the median, minimum and maximum of v (zeros for no values): the
// "median (min, max)" of repeated runs.
func Range[T Number](v []T) (med, lo, hi T) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	s := Sorted(v)
	n := len(s)
	med = s[n/2]
	if n%2 == 0 {
		med = s[n/2-1] + (s[n/2]-s[n/2-1])/2
	}
	return med, s[0], s[n-1]
}

// Pct is the nearest-rank p-th percentile (0 < p <= 100) of v: the smallest value that at
// least p% of the values do not exceed. The P99 of 60 samples is therefore the largest one. 0
// for no values.
func Pct[T Number](v []T, p float64) T {
	if len(v) == 0 {
		return 0
	}
	s := Sorted(v)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Mean is the arithmetic mean of v; 0 for no values.
func Mean[T Number](v []T) T {
	if len(v) == 0 {
		return 0
	}
	var sum float64
	for _, x := range v {
		sum += float64(x)
	}
	return T(sum / float64(len(v)))
}

// Ms is d in milliseconds, for BENCH lines.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
