package hotspot

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPlanFactor(t *testing.T) {
	cfg := DefaultConfig()
	for _, tc := range []struct {
		name      string
		readers   int
		requested int
		load      ClusterLoad
		want      int
		wantCap   int
		note      string
	}{
		{"quiet big job capped at 50", 10000, 0, ClusterLoad{Live: 200}, 50, 50, "capped at 50 by cluster load"},
		{"busy by xceivers capped at 20", 10000, 0, ClusterLoad{Live: 200, AvgXceivers: 64}, 20, 20, "capped at 20"},
		{"busy by pending work", 10000, 0, ClusterLoad{Live: 100, Pending: 5000}, 20, 20, ""},
		{"half busy", 10000, 0, ClusterLoad{Live: 200, AvgXceivers: 32}, 35, 35, ""},
		{"grows with readers", 40, 0, ClusterLoad{Live: 200}, 20, 50, ""},
		{"few readers keep min factor", 2, 0, ClusterLoad{Live: 200}, 3, 50, ""},
		{"never above live datanodes", 32, 0, ClusterLoad{Live: 12}, 12, 50, "12 live DataNodes"},
		{"explicit factor above cluster size", 1, 100, ClusterLoad{Live: 6}, 6, 50, "capped at 6 live"},
		{"explicit factor honoured", 1, 7, ClusterLoad{Live: 20}, 7, 50, ""},
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
	for r := 1; r < 300; r += 7 {
		f := cfg.PlanFactor(r, 0, ClusterLoad{Live: 100})
		if f.Target < prev {
			t.Fatalf("readers %d: target %d < %d", r, f.Target, prev)
		}
		prev = f.Target
	}
	prev = 1 << 30
	for x := 0.0; x < 100; x += 5 {
		f := cfg.PlanFactor(1000, 0, ClusterLoad{Live: 100, AvgXceivers: x})
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
	if def.MaxFactorQuiet != 50 || def.MaxFactorBusy != 20 || def.Reactive || len(def.Boost) != 3 {
		t.Fatalf("defaults: %+v", def)
	}
	c, err := ConfigFromMap(map[string]string{
		"newtricks.hotspot.allowed-prefixes":   "/ckpt, /data",
		"newtricks.hotspot.reactive":           "true",
		"newtricks.hotspot.reactive.window":    "5s",
		"newtricks.hotspot.max-duration":       "3600000",
		"newtricks.hotspot.boost.max-streams":  "0",
		"newtricks.hotspot.load.busy-xceivers": "10.5",
		"dfs.replication.max":                  "40",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.AllowedPrefixes) != 2 || c.AllowedPrefixes[1] != "/data" || !c.Reactive || c.ReactiveWindow != 5*time.Second ||
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
		{"newtricks.hotspot.max-factor.busy": "60"},
		{"newtricks.hotspot.state.dir": "/a/../b"},
		{"newtricks.hotspot.state.xattr-prefix": "system.x"},
		{"newtricks.hotspot.reactive.clients": "1"},
		{"newtricks.hotspot.load.busy-xceivers": "lots"},
		{"newtricks.hotspot.reactive": "maybe"},
	} {
		if _, err := ConfigFromMap(bad); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%v: err %v, want ErrBadConfig", bad, err)
		}
	}
}

func TestFitRecord(t *testing.T) {
	r := &record{V: recordVersion, ID: "h1", Until: 1}
	for i := 0; i < 20000; i++ {
		r.Files = append(r.Files, recFile{Path: "/ckpt/step-000100/shard-" + strings.Repeat("x", i%7) + time.Duration(i).String(), Original: 3, Target: 20, Length: 1 << 20})
	}
	enc, left, err := fitRecord(r, "user.newtricks.hotspot.hint.h1", 16384)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc)+len("user.newtricks.hotspot.hint.h1") > 16384 || len(left) == 0 || len(r.Files) < 1000 {
		t.Fatalf("enc %d bytes, kept %d, left %d", len(enc), len(r.Files), len(left))
	}
	back, err := decodeRecord(enc)
	if err != nil || len(back.Files) != len(r.Files) || back.Files[0] != r.Files[0] {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := decodeRecord([]byte("garbage")); err == nil {
		t.Fatal("garbage decoded")
	}
}
