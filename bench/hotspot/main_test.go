package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/newtricks/newtricks/bench/internal/plot"
	"github.com/newtricks/newtricks/harness/cluster"
)

func defaults() options {
	return options{dataNodes: 12, bandwidth: 16 << 20, readers: 32, files: 4, fileBytes: 16 << 20, blockSize: 8 << 20,
		lead: 10 * time.Second, reps: 3, interval: 1, balanced: true, checkDataNodes: 8, checkBandwidth: 24 << 20, killAfter: 3 * time.Second}
}

// Bad flags are refused before any cluster starts, naming the flag.
func TestValidate(t *testing.T) {
	if err := defaults().validate(false); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, tc := range map[string]struct {
		change   func(*options)
		failover bool
		want     string
	}{
		"few datanodes":   {func(o *options) { o.dataNodes = 3 }, false, "-datanodes 3"},
		"check too big":   {func(o *options) { o.checkDataNodes = 12 }, false, "-check-datanodes 12"},
		"check too small": {func(o *options) { o.checkDataNodes = 3 }, false, "-check-datanodes 3"},
		"check bandwidth": {func(o *options) { o.checkBandwidth = 10 }, false, "-check-dn-bandwidth 10"},
		"no reps":         {func(o *options) { o.reps = 0 }, false, "-reps 0"},
		"block size":      {func(o *options) { o.blockSize = 1000 }, false, "-block-size 1000"},
		"lead":            {func(o *options) { o.lead = -time.Second }, false, "-lead -1s"},
		"kill after":      {func(o *options) { o.killAfter = 0 }, true, "-kill-after 0s"},
	} {
		o := defaults()
		tc.change(&o)
		err := o.validate(tc.failover)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one naming %q", name, err, tc.want)
		}
	}
	o := defaults()
	o.checkDataNodes = 0
	if err := o.validate(false); err != nil {
		t.Errorf("no check configuration: %v", err)
	}
}

// setThrottle changes the two throttles in a DataNode's hdfs-site.xml and keeps the rest.
func TestSetThrottle(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "hdfs-site.xml")
	if err := os.WriteFile(p, cluster.SiteXML(map[string]string{"dfs.datanode.data.read.bandwidthPerSec": "1",
		"dfs.replication": "3"}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := setThrottle(dir, 25165824); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{"dfs.replication", "dfs.datanode.data.read.bandwidthPerSec", "dfs.datanode.data.transfer.bandwidthPerSec"} {
		if !strings.Contains(s, want) {
			t.Errorf("%s lost:\n%s", want, s)
		}
	}
	if strings.Count(s, "25165824") != 2 || strings.Contains(s, "<value>1</value>") {
		t.Errorf("throttles not both 25165824:\n%s", s)
	}
	if err := setThrottle(filepath.Join(dir, "missing"), 1); err == nil {
		t.Error("a missing conf dir was accepted")
	}
}

// TestStormPlot: the plot shows each case's median storm (not its best), its curve ends with
// every reader finished at the barrier, and a case without a storm is an error.
func TestStormPlot(t *testing.T) {
	storm := func(secs ...float64) result {
		r := result{}
		for _, s := range secs {
			d := time.Duration(s * float64(time.Second))
			r.took = append(r.took, d)
			r.barrier = max(r.barrier, d)
		}
		return r
	}
	rs := []result{storm(1, 9), storm(1, 3), storm(1, 5)}
	if m := medianStorm(rs); m.barrier != 5*time.Second {
		t.Fatalf("median storm barrier %v, want 5s", m.barrier)
	}
	s := finishedSeries("x", storm(4, 2, 3).took)
	if n := len(s.X); s.X[n-1] != 4 || s.Y[n-1] != 3 || s.Y[0] != 0 {
		t.Fatalf("series ends at (%v, %v), starts at %v", s.X[n-1], s.Y[n-1], s.Y[0])
	}
	p := filepath.Join(t.TempDir(), "h.png")
	storms := map[string][]result{caseRep3: rs, caseHint: {storm(1, 2)}}
	if err := writeStormPlot(p, "calibrate", []string{caseRep3, caseHint}, storms, []plot.Mark{{X: 2.5, Label: "limit"}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatal(err)
	}
	if err := writeStormPlot(p, "calibrate", []string{caseRep3, caseSetrepAhead}, storms, nil); err == nil {
		t.Fatal("a case without a storm: no error")
	}
}
