package stats

import (
	"testing"
	"time"
)

func TestOrderStatistics(t *testing.T) {
	if m, lo, hi := Range([]float64{5, 1, 3}); m != 3 || lo != 1 || hi != 5 {
		t.Errorf("Range odd = %v %v %v, want 3 1 5", m, lo, hi)
	}
	if m := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("Median even = %v, want 2.5", m)
	}
	if m := Median([]time.Duration{3, 1, 2, 10}); m != 2 { // integer midpoint of 2 and 3
		t.Errorf("Median durations = %v, want 2", m)
	}
	v := make([]int, 60)
	for i := range v {
		v[i] = 60 - i // 60..1, unsorted
	}
	if p := Pct(v, 99); p != 60 {
		t.Errorf("P99 of 1..60 = %d, want 60 (nearest rank: ceil(59.4) = 60th)", p)
	}
	if p := Pct(v, 50); p != 30 {
		t.Errorf("P50 of 1..60 = %d, want 30", p)
	}
	if p := Pct(v, 100); p != 60 {
		t.Errorf("P100 = %d", p)
	}
	if Mean([]float64{1, 2, 6}) != 3 || Pct([]int{}, 99) != 0 || Median([]int{}) != 0 {
		t.Error("Mean or empty cases wrong")
	}
	in := []float64{3, 1, 2}
	Median(in)
	if in[0] != 3 {
		t.Error("Median sorted its argument in place")
	}
}
