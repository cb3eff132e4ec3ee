package hotspot

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestPlanFactor(t *testing.T) {
	cfg := DefaultConfig()
	const gib = 1 << 30
	// A 1 GiB hot set on 3 DataNodes of a large quiet cluster with plenty of space.
	big := func(live int) ClusterLoad {
		return ClusterLoad{Live: live, Eligible: live, HotBytes: gib, HotBlocks: 8, Concentration: 1, FreeBytes: int64(live) * 1000 * gib, BaseFactor: 3}
	}
	busyBig := big(1000)
	busyBig.AvgXceivers = 64
	halfBig := big(1000)
	halfBig.AvgXceivers = 32
	spread := big(1000)
	spread.Concentration = 0.05 // written by many writers: the busiest node holds 5%
	spread.HotBlocks = 1000
	few := spread
	few.HotBlocks = 64 // spread, but too few blocks for 1,000 nodes: 16 replicas per node
	tight := big(1000)
	tight.FreeBytes = 500 * gib // 10%: 50 GiB of extra replicas, 50 more
	tight.InFlightBytes = 20 * gib
	for _, tc := range []struct {
		name      string
		readers   int
		requested int
		load      ClusterLoad
		want      int
		wantCap   int
		note      string
	}{
		{"readers matter beyond 100 on a large cluster", 1000, 0, big(1000), 500, 512, ""},
		{"spread bounds the factor", 10000, 0, big(1000), 512, 512, "max-factor.quiet 512"},
		{"concentration: a spread set needs less", 10000, 0, spread, 50, 512, "busiest current holder (5%"},
		{"depth: few spread blocks still need many replicas", 10000, 0, few, 250, 512, ""},
		{"busy by xceivers capped at 20", 10000, 0, busyBig, 20, 20, "capped at 20"},
		{"busy by pending work", 10000, 0, ClusterLoad{Live: 100, Pending: 5000}, 20, 20, ""},
		{"half busy", 10000, 0, halfBig, 266, 266, ""},
		{"space budget, less in-flight copies", 10000, 0, tight, 33, 512, "free space"},
		{"grows with readers", 40, 0, ClusterLoad{Live: 200}, 20, 512, ""},
		{"few readers keep min factor", 2, 0, ClusterLoad{Live: 200}, 3, 512, ""},
		{"never above live datanodes", 32, 0, ClusterLoad{Live: 12}, 12, 512, "1/12 of the readers"},
		{"eligible nodes, not live, bound it", 32, 0, ClusterLoad{Live: 12, Eligible: 8}, 8, 512, ""},
		{"explicit factor above cluster size", 1, 100, ClusterLoad{Live: 6}, 6, 512, "capped at 6 live"},
		{"explicit factor honoured", 1, 7, ClusterLoad{Live: 20}, 7, 512, ""},
		{"load above busy saturates", 10000, 0, ClusterLoad{Live: 200, AvgXceivers: 1000}, 20, 20, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := cfg.PlanFactor(tc.readers, tc.requested, tc.load)
			if f.Target != tc.want || f.Cap != tc.wantCap {
				t.Fatalf("target %d cap %d, want %d cap %d (%+v)", f.Target, f.Cap, tc.want, tc.wantCap, f)
			}
			if tc.note != "" && !strings.Contains(strings.Join(f.Notes, ";"), tc.note) {
				t.Fatalf("notes %q lack %q", f.Notes, tc.note)
			}
		})
	}
	// Monotonic: more readers never lower the factor; more load never raises it.
	prev := 0
	for r := 1; r < 3000; r += 7 {
		f := cfg.PlanFactor(r, 0, big(1000))
		if f.Target < prev {
			t.Fatalf("readers %d: target %d < %d", r, f.Target, prev)
		}
		prev = f.Target
	}
	prev = 1 << 30
	for x := 0.0; x < 100; x += 5 {
		l := big(1000)
		l.AvgXceivers = x
		f := cfg.PlanFactor(1000, 0, l)
		if f.Target > prev {
			t.Fatalf("xceivers %v: target %d > %d", x, f.Target, prev)
		}
		prev = f.Target
	}
}

func TestApplyQuota(t *testing.T) {
	mk := func(p string, l int64, cur, target int) FilePlan {
		return FilePlan{Path: p, Length: l, Original: cur, Current: cur, Target: target}
	}
	for _, tc := range []struct {
		name        string
		files       []FilePlan
		quotas      map[string]int64
		wantTargets map[string]int
		wantSkipped []string
	}{
		{"no quota", []FilePlan{mk("/a/f", 100, 3, 10)}, map[string]int64{}, map[string]int{"/a/f": 10}, nil},
		{"fits", []FilePlan{mk("/a/f", 100, 3, 10)}, map[string]int64{"/a": 700}, map[string]int{"/a/f": 10}, nil},
		{"lowered", []FilePlan{mk("/a/f", 100, 3, 10)}, map[string]int64{"/a": 450}, map[string]int{"/a/f": 7}, nil},
		{"skipped", []FilePlan{mk("/a/f", 100, 3, 10)}, map[string]int64{"/a": 50}, map[string]int{}, []string{"/a/f"}},
		{"negative headroom", []FilePlan{mk("/a/f", 100, 3, 10)}, map[string]int64{"/a": -5}, map[string]int{}, []string{"/a/f"}},
		{"shared headroom in order", []FilePlan{mk("/a/x/f", 100, 3, 10), mk("/a/y/g", 100, 3, 10)},
			map[string]int64{"/a": 1000}, map[string]int{"/a/x/f": 10, "/a/y/g": 6}, nil},
		{"tightest ancestor wins", []FilePlan{mk("/a/b/f", 100, 3, 10)}, map[string]int64{"/a": 10000, "/a/b": 200},
			map[string]int{"/a/b/f": 5}, nil},
		{"no growth no check", []FilePlan{mk("/a/f", 100, 5, 5)}, map[string]int64{"/a": 0}, map[string]int{"/a/f": 5}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, skipped := applyQuota(tc.files, tc.quotas)
			got := map[string]int{}
			for _, f := range kept {
				got[f.Path] = f.Target
			}
			if len(got) != len(tc.wantTargets) {
				t.Fatalf("kept %v, want %v", got, tc.wantTargets)
			}
			for p, w := range tc.wantTargets {
				if got[p] != w {
					t.Fatalf("%s target %d, want %d", p, got[p], w)
				}
			}
			if len(skipped) != len(tc.wantSkipped) {
				t.Fatalf("skipped %v, want %v", skipped, tc.wantSkipped)
			}
			for i, s := range skipped {
				if s.Path != tc.wantSkipped[i] || s.Code != SkipQuota {
					t.Fatalf("skipped %+v", s)
				}
			}
		})
	}
}

func TestRequestValidate(t *testing.T) {
	cfg := DefaultConfig()
	ok := Request{Paths: []string{"/a"}, HotIn: 10 * time.Second, HotFor: time.Minute, Readers: 4, User: "u"}
	million := make([]string, 1_000_000)
	for i := range million {
		million[i] = "/a/f"
	}
	for _, tc := range []struct {
		name string
		mod  func(*Request)
		want string // "" means valid
	}{
		{"valid", func(r *Request) {}, ""},
		{"no paths", func(r *Request) { r.Paths = nil }, "no paths"},
		{"million paths", func(r *Request) { r.Paths = million }, "at most 1000"},
		{"relative", func(r *Request) { r.Paths = []string{"a/b"} }, "not absolute"},
		{"bad glob", func(r *Request) { r.Paths = []string{"/a/[x"} }, "bad glob"},
		{"no user", func(r *Request) { r.User = "" }, "no user"},
		{"negative in", func(r *Request) { r.HotIn = -time.Second }, "negative"},
		{"huge in", func(r *Request) { r.HotIn = 1000 * time.Hour }, "maximum lead"},
		{"zero for", func(r *Request) { r.HotFor = 0 }, "positive"},
		{"negative for", func(r *Request) { r.HotFor = -time.Hour }, "positive"},
		{"huge for", func(r *Request) { r.HotFor = msDuration(1 << 62) }, "maximum duration"},
		{"zero readers", func(r *Request) { r.Readers = 0 }, "readers"},
		{"negative replication", func(r *Request) { r.Replication = -1 }, "negative"},
		{"absurd replication", func(r *Request) { r.Replication = 1 << 20 }, "not a valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.mod(&r)
			err := r.Validate(cfg)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}

func TestConfigFromMap(t *testing.T) {
	def, err := ConfigFromMap(nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.MaxFactorQuiet != 512 || def.MaxFactorBusy != 20 || def.MaxSpaceFraction != 0.1 || def.Reactive || len(def.Boost) != 3 {
		t.Fatalf("defaults: %+v", def)
	}
	c, err := ConfigFromMap(map[string]string{
		"newtricks.hotspot.allowed-prefixes":   "/ckpt, /data",
		"newtricks.hotspot.reactive":           "true",
		"newtricks.hotspot.reactive.user":      "hotspot-svc",
		"newtricks.hotspot.reactive.window":    "5s",
		"newtricks.hotspot.max-duration":       "3600000",
		"newtricks.hotspot.boost.max-streams":  "0",
		"newtricks.hotspot.load.busy-xceivers": "10.5",
		"dfs.replication.max":                  "40",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.AllowedPrefixes) != 2 || c.AllowedPrefixes[1] != "/data" || !c.Reactive || c.ReactiveUser != "hotspot-svc" || c.ReactiveWindow != 5*time.Second ||
		c.MaxDuration != time.Hour || len(c.Boost) != 2 || c.BusyXceivers != 10.5 || c.ReplicationMax != 40 {
		t.Fatalf("parsed: %+v", c)
	}
	if !c.allowed("/ckpt/a") || c.allowed("/ckptx/a") || c.allowed("/other") || !c.allowed("/data") {
		t.Fatal("allowed prefixes")
	}
	for _, bad := range []map[string]string{
		{"newtricks.hotspot.max-paths": "x"},
		{"newtricks.hotspot.max-paths": "0"},
		{"newtricks.hotspot.allowed-prefixes": "relative"},
		{"newtricks.hotspot.max-factor.busy": "600"},
		{"newtricks.hotspot.state.dir": "/a/../b"},
		{"newtricks.hotspot.state.xattr-prefix": "system.x"},
		{"newtricks.hotspot.reactive.clients": "1"},
		{"newtricks.hotspot.load.busy-xceivers": "lots"},
		{"newtricks.hotspot.reactive": "maybe"},
		{"newtricks.hotspot.state.xattr-prefix": "trusted.newtricks"}, // markers are written as the hint's user
	} {
		if _, err := ConfigFromMap(bad); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%v: err %v, want ErrBadConfig", bad, err)
		}
	}
	// Reactive mode without its service user fails Configure naming the key: implicit hints
	// never act as the NameNode.
	if _, err := ConfigFromMap(map[string]string{"newtricks.hotspot.reactive": "true"}); !errors.Is(err, ErrBadConfig) ||
		!strings.Contains(err.Error(), "newtricks.hotspot.reactive.user") {
		t.Errorf("reactive without a user: %v", err)
	}
}

func TestFitRecord(t *testing.T) {
	const name = "user.newtricks.hotspot.hint.h1"
	rng := rand.New(rand.NewPCG(1, 2))
	// A checkpoint of 10,000 shards created together: ids close, with other creates between.
	r := &record{V: recordVersion, ID: "h1", Until: 1, User: "alice"}
	id := int64(16386)
	for i := 0; i < 10000; i++ {
		id += 1 + rng.Int64N(40)
		r.Files = append(r.Files, recFile{ID: id, Target: 20})
	}
	r.Files[17].Target = 7 // one lowered by quota
	enc, left, err := fitRecord(r, name, 16384-recordSlack)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 || len(r.Files) != 10000 {
		t.Fatalf("10,000 close ids: %d bytes, left %d", len(enc), len(left))
	}
	t.Logf("10,000 files: %d bytes", len(enc))
	back, err := decodeRecord(enc, 10000)
	if err != nil || len(back.Files) != 10000 || back.Files[17] != r.Files[17] || back.Files[9999] != r.Files[9999] || back.User != "alice" {
		t.Fatalf("round trip: %v", err)
	}
	// Ids spread over a large namespace do not all fit: the rest is left out, never untracked.
	r2 := &record{V: recordVersion, ID: "h1", Until: 1}
	id = 1 << 20
	for i := 0; i < 20000; i++ {
		id += 1 + rng.Int64N(1<<24)
		r2.Files = append(r2.Files, recFile{ID: id, Target: 20})
	}
	enc, left, err = fitRecord(r2, name, 16384)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc)+len(name) > 16384 || len(left) == 0 || len(r2.Files) < 1000 {
		t.Fatalf("enc %d bytes, kept %d, left %d", len(enc), len(r2.Files), len(left))
	}
	for _, bad := range [][]byte{[]byte("garbage"), append(append([]byte(nil), enc[:4]...), 1, 2, 3), enc[:len(enc)-3]} {
		if _, err := decodeRecord(bad, 10000); err == nil {
			t.Fatalf("%q decoded", bad[:min(len(bad), 8)])
		}
	}
	// A record of the first format is reported as a version problem.
	if _, err := decodeRecord([]byte{0x1f, 0x8b, 8, 0}, 10000); !errors.Is(err, errRecordVersion) {
		t.Fatalf("old format: %v", err)
	}
}

func TestMarkerRequests(t *testing.T) {
	m := &Manager{cfg: DefaultConfig()}
	name := m.cfg.markerName()
	// Raise: in-flight marker with P before, settled marker after.
	rc := m.request(fileChange{id: 7, original: 3, expect: 3, want: 6, hints: map[string]int{"a": 6}})
	in, _ := decodeMarker(rc.XattrValue)
	out, _ := decodeMarker(rc.FinalXattrValue)
	if rc.Path != "/.reserved/.inodes/7" || rc.Replication != 6 || rc.Expect != 3 || rc.SetXattr != name ||
		in.P != 3 || in.A != 6 || out.P != 0 || out.A != 6 || out.H["a"] != 6 || rc.RemoveXattr != "" {
		t.Fatalf("raise %+v in %+v out %+v", rc, in, out)
	}
	// Another hint joins below the factor: marker only.
	rc = m.request(fileChange{id: 7, original: 3, expect: 6, want: 6, hints: map[string]int{"a": 6, "b": 4}})
	if rc.Replication != 0 || len(rc.FinalXattrValue) != 0 || rc.SetXattr != name {
		t.Fatalf("join %+v", rc)
	}
	// Last hint ends: in-flight marker, factor back, marker removed.
	rc = m.request(fileChange{id: 7, original: 3, expect: 6, want: 3})
	in, _ = decodeMarker(rc.XattrValue)
	if rc.Replication != 3 || rc.RemoveXattr != name || in.P != 6 || in.A != 3 || len(in.H) != 0 {
		t.Fatalf("restore %+v", rc)
	}
	// Let go after an outside change: marker removed, factor untouched, no condition.
	rc = m.request(fileChange{id: 7})
	if rc.Replication != 0 || rc.Expect != 0 || rc.RemoveXattr != name || rc.SetXattr != "" {
		t.Fatalf("let go %+v", rc)
	}
	if _, err := decodeMarker([]byte(`{"o":3,"h":"h1"}`)); err == nil {
		t.Fatal("marker of the first format decoded")
	}
}

func TestEstimateReady(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RedundancyInterval = time.Second
	// Bandwidth-bound: one 64 MiB file to 12 DataNodes at 100 MiB/s: 0.64 s per pipeline.
	one := []FilePlan{{Path: "/a", Length: 64 << 20, Current: 3, Target: 12}}
	if d := cfg.estimateReady(one, map[string]int64{"/a": 128 << 20}, 12); d < cfg.ScheduleDelay || d > cfg.ScheduleDelay+2*time.Second {
		t.Fatalf("one file: %v", d)
	}
	// Scheduling-bound: 10,000 one-block files on 3 DataNodes, 3 x 16 blocks per interval:
	// 208 more intervals after the first.
	var many []FilePlan
	bs := map[string]int64{}
	for i := 0; i < 10000; i++ {
		p := fmt.Sprintf("/m/%d", i)
		many = append(many, FilePlan{Path: p, Length: 1, Current: 1, Target: 3})
		bs[p] = 128 << 20
	}
	if d := cfg.estimateReady(many, bs, 3); d != cfg.ScheduleDelay+208*time.Second {
		t.Fatalf("many blocks: %v, want %v", d, cfg.ScheduleDelay+208*time.Second)
	}
	c, err := ConfigFromMap(map[string]string{"dfs.namenode.redundancy.interval.seconds": "1"})
	if err != nil || c.RedundancyInterval != time.Second {
		t.Fatalf("interval from the HDFS key: %v %v", c.RedundancyInterval, err)
	}
}
