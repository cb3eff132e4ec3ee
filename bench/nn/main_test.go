package main

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	if g.count != 2 || math.Abs(g.pauseMs-44.511) > 1e-9 || g.allocMB != 44 || !slices.Equal(g.liveMB, []float64{3, 10}) || !slices.Equal(g.heapMB, []float64{61, 80}) {
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

func TestTimedCPUInterpolatesOverTheTimedPhase(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := []usageSample{{t0, 0}, {t0.Add(10 * time.Millisecond), 1000}, {t0.Add(30 * time.Millisecond), 5000}}
	// From t0+5ms (500) to t0+20ms (1000 + half of 4000).
	ns, err := timedCPU(r, t0.Add(5*time.Millisecond), 15*time.Millisecond)
	if err != nil || ns != 2500 {
		t.Fatalf("got %d, %v; want 2500", ns, err)
	}
	if _, err := timedCPU(r, t0, 40*time.Millisecond); err == nil {
		t.Fatal("a phase that ends after the last reading must be an error")
	}
}

func TestOpStatsTakesTheBlockOfTheOperation(t *testing.T) {
	out := `--- create stats  ---
# operations: 5000
Elapsed Time: 2900
 Ops per sec: 1724.1
--- open stats  ---
# operations: 5000
Elapsed Time: 1000
 Ops per sec: 5000.0
`
	ops, ms, err := opStats(out, "open")
	if err != nil || ops != 5000 || ms != 1000 {
		t.Fatalf("open: %v %v %v", ops, ms, err)
	}
	if _, _, err := opStats(out, "rename"); err == nil {
		t.Fatal("missing stats must be an error")
	}
}

func TestParseExtTakesNamenodeExtCounters(t *testing.T) {
	text := `# HELP newtricks_events_received_total Events accepted from the NameNode hook, by kind (audit, namespace).
# TYPE newtricks_events_received_total counter
newtricks_events_received_total{kind="audit"} 4992
newtricks_events_received_total{kind="namespace"} 3750
newtricks_hotspot_reactive_triggers_total 16
newtricks_hotspot_reactive_dropped_total 0
`
	c, err := parseExt(strings.NewReader(text))
	if err != nil || c != (extCounters{audit: 4992, namespace: 3750, triggers: 16}) {
		t.Fatalf("got %+v, %v", c, err)
	}
	if d := c.minus(extCounters{audit: 992, namespace: 750, triggers: 6}); d != (extCounters{4000, 3000, 10}) {
		t.Fatalf("minus: %+v", d)
	}
}

func TestWorkloadCountsEveryClientOperation(t *testing.T) {
	w := workload{clients: 8, files: 1000, hot: 16}
	// 125 creates per client (j = 0..124), renames of j%8 in {0,1}: 32, deletes of j%8 in
	// {2,3}: 32, 16 hot files opened 7 times each.
	if w.perClient() != 125 || w.opensPer() != 7 || w.ops() != 8*(125+32+32+7*16) {
		t.Fatalf("perClient %d opensPer %d ops %d", w.perClient(), w.opensPer(), w.ops())
	}
	if (workload{clients: 8, files: 10, hot: 16}).opensPer() != 1 {
		t.Fatal("every hot file is opened at least once per client")
	}
}

func TestHooksNsCountsOnlyTheHooksThreads(t *testing.T) {
	parts := map[string]int64{
		"RPC (handlers, readers, responder)": 1000,
		"newtricks event forwarder":          30,
		"newtricks/gRPC other":               20,
		"co-process namenode-ext":            50,
		"edit log (async)":                   400,
	}
	if got := hooksNs(parts); got != 100 {
		t.Fatalf("hooksNs = %d, want 100", got)
	}
}

// TestWritePlots: both plots of the clients rounds are written as PNGs, and a run without
// plain rounds is an error rather than an empty picture.
func TestWritePlots(t *testing.T) {
	rounds := func(ops, hooks float64) []sample {
		var s []sample
		for i := 0; i < 5; i++ {
			s = append(s, sample{ops: ops + float64(i), cpuUs: 100, hooksUs: hooks + float64(i)})
		}
		return s
	}
	res := map[string]map[string][]sample{
		"plain":   {workloadOpName: rounds(2000, 0)},
		"control": {workloadOpName: rounds(2050, 0)},
		"typical": {workloadOpName: rounds(1800, 20)},
	}
	prefix := filepath.Join(t.TempDir(), "nn")
	files, err := writePlots(prefix, workloadOpName, res, []string{"plain", "control", "typical"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{prefix + "-hooks.png", prefix + "-ratio.png"}; !slices.Equal(files, want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		_, err = png.Decode(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if _, err := writePlots(prefix, workloadOpName, map[string]map[string][]sample{"typical": res["typical"]}, []string{"typical"}); err == nil {
		t.Fatal("no plain rounds: no error")
	}
}
