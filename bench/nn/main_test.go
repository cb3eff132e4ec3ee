package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestGCDuringCountsCollectionsInWindows(t *testing.T) {
	log := `[2026-12-01T14:17:07.725+0000] Using Serial
[2026-12-01T14:17:10.000+0000] GC(0) Pause Young (Allocation Failure) 17M->2M(61M) 22.359ms
[2026-12-01T14:17:11.100+0000] GC(1) Pause Young (Allocation Failure) 19M->3M(61M) 4.011ms
[2026-12-01T14:17:11.200+0000] GC(2) Pause Full (Allocation Failure) 30M->10M(80M) 40.5ms
[2026-12-01T14:17:20.000+0000] GC(3) Pause Young (Allocation Failure) 50M->12M(80M) 5.0ms
`
	path := filepath.Join(t.TempDir(), "gc.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	g, err := gcDuring(path, [][2]time.Time{{at("2026-12-01T14:17:11Z"), at("2026-12-01T14:17:12Z")}})
	if err != nil {
		t.Fatal(err)
	}
	// GC(1) and GC(2) are in the window: allocated 19-2 and 30-3 MB.
	if g.count != 2 || math.Abs(g.pauseMs-44.511) > 1e-9 || g.allocMB != 44 || median(g.liveMB) != 10 || median(g.heapMB) != 80 {
		t.Fatalf("got %+v", g)
	}
	if _, err := gcDuring(filepath.Join(t.TempDir(), "none.log"), nil); err == nil {
		t.Fatal("a missing log must be an error")
	}
}

func TestPairedRatiosAreRoundByRound(t *testing.T) {
	p := []sample{{ops: 100, cpuUs: 10}, {ops: 200, cpuUs: 20}}
	h := []sample{{ops: 90, cpuUs: 11}, {ops: 220, cpuUs: 18}}
	r, c := paired(h, p)
	if len(r) != 2 || r[0] != 0.9 || r[1] != 1.1 || c[0] != 1.1 || c[1] != 0.9 {
		t.Fatalf("ratios %v, cpu %v", r, c)
	}
}
