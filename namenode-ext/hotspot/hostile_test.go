package hotspot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
)

// metric reads one of the manager's counters or gauges by its full name.
func (e *env) metric(name string) float64 {
	e.t.Helper()
	for _, c := range e.m.Collectors() {
		ch := make(chan *prometheus.Desc, 8)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			if strings.Contains(d.String(), `"`+name+`"`) {
				return testutil.ToFloat64(c)
			}
		}
	}
	e.t.Fatalf("no metric %s", name)
	return 0
}

// A marker is on the file, so the file's owner can rewrite it. alice forges hers (a huge
// original factor, as on the real cluster, and a plausible but wrong one); after a restart
// recovery skips exactly her files (counted, reported), bob can hint at once, and bob's
// raised file is restored on time. Before: recovery failed on the first refused change and
// retried for ever, every Create answered "recovering", every raised file stayed raised.
func TestForgedMarkerSkippedRecoveryGoesOn(t *testing.T) {
	for _, forged := range []string{
		`{"o":40000,"a":6,"h":{"%s":6}}`, // out of range: refused by the NameNode before
		`{"o":9,"a":6,"h":{"%s":6}}`,     // in range, but not the recorded original (3)
		`{"o":3,"a":6,"h":{"%s":40}}`,    // the hint's target forged
	} {
		t.Run(forged, func(t *testing.T) {
			host := cluster(12)
			host.File("/data/bob/y", "bob", 1000, 3)
			e := newEnv(t, hotspot.DefaultConfig(), host)
			a := e.create("alice", []string{"/ckpt/s1/meta"}, 12, time.Minute)
			b := e.create("bob", []string{"/data/bob/x"}, 12, time.Minute)
			if host.Rep("/ckpt/s1/meta") != 6 || host.Rep("/data/bob/x") != 6 {
				t.Fatalf("not raised: %d %d", host.Rep("/ckpt/s1/meta"), host.Rep("/data/bob/x"))
			}
			host.SetXAttrRaw("/ckpt/s1/meta", markerName, []byte(fmt.Sprintf(forged, a.HintID)))
			e.crash() // recovery must finish (e.start fails the test otherwise)
			if got := e.metric("newtricks_hotspot_markers_rejected_total"); got != 1 {
				t.Fatalf("markers rejected %v", got)
			}
			if _, err := e.client("bob").Create(e.ctx, hintclient.Hint{Paths: []string{"/data/bob/y"}, For: time.Minute, Readers: 12}); err != nil {
				t.Fatalf("bob cannot hint after recovery: %v", err)
			}
			_, problems, _ := e.client("hdfs").ListAll(e.ctx)
			if j := strings.Join(problems, "\n"); len(problems) != 1 || !strings.Contains(j, "/ckpt/s1/meta") || !strings.Contains(j, "marker left in place") {
				t.Fatalf("problems %q", problems)
			}
			e.clk.add(2 * time.Minute)
			e.tick()
			if host.Rep("/data/bob/x") != 3 {
				t.Fatalf("bob's file not restored: %d", host.Rep("/data/bob/x"))
			}
			if r := host.Rep("/ckpt/s1/meta"); r != 6 {
				t.Fatalf("the forged file's factor was changed to %d", r)
			}
			st, err := e.client("bob").Status(e.ctx, b.HintID)
			if err == nil && st.State != hotspot.StateFinished {
				t.Fatalf("bob's hint %s", st.State)
			}
		})
	}
}

// A change the NameNode refuses during recovery (here: the factor it would finish) skips that
// file only; recovery finishes and the others go on.
func TestRecoveryRefusedChangeSkipsOneFile(t *testing.T) {
	host := cluster(12)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	e.create("alice", []string{"/ckpt/s1/meta", "/ckpt/s1/emb-0"}, 12, time.Minute)
	host.CrashAfterMarker()
	e.create("alice", []string{"/ckpt/s1/meta", "/ckpt/s1/emb-0"}, 20, time.Minute) // both mid-change
	host.FailChange("/ckpt/s1/meta", status.Error(codes.InvalidArgument, "IllegalArgumentException: replication"))
	e.crash()
	if host.Rep("/ckpt/s1/emb-0") != 10 {
		t.Fatalf("the other file's change not finished: %d", host.Rep("/ckpt/s1/emb-0"))
	}
	if e.metric("newtricks_hotspot_recovery_files_skipped_total") != 1 {
		t.Fatal("skip not counted")
	}
	if _, err := e.client("bob").Create(e.ctx, hintclient.Hint{Paths: []string{"/data/bob/x"}, For: time.Minute, Readers: 12}); err != nil {
		t.Fatalf("bob: %v", err)
	}
}

// Per-user cap: alice at hers is RESOURCE_EXHAUSTED, a dry run too (it does the same NameNode
// work); bob still hints.
func TestPerUserHintCap(t *testing.T) {
	cfg := hotspot.DefaultConfig()
	cfg.MaxActiveHintsPerUser = 2
	host := cluster(12)
	e := newEnv(t, cfg, host)
	alice := e.client("alice")
	for _, p := range []string{"/ckpt/s1/meta", "/ckpt/s1/emb-0"} {
		if _, err := alice.Create(e.ctx, hintclient.Hint{Paths: []string{p}, For: time.Minute, Readers: 8}); err != nil {
			t.Fatal(err)
		}
	}
	for _, dry := range []bool{false, true} {
		_, err := alice.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/emb-1"}, For: time.Minute, Readers: 8, DryRun: dry})
		if code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "per-user") {
			t.Fatalf("alice's third (dry run %v): %v", dry, err)
		}
	}
	if _, err := e.client("bob").Create(e.ctx, hintclient.Hint{Paths: []string{"/data/bob/x"}, For: time.Minute, Readers: 8}); err != nil {
		t.Fatalf("bob: %v", err)
	}
	if e.metric("newtricks_hotspot_hints_refused_per_user_total") != 2 {
		t.Fatal("refusals not counted")
	}
}

// Global cap: a dry run is refused when every hint is taken, as a hint is.
func TestDryRunUnderGlobalCap(t *testing.T) {
	cfg := hotspot.DefaultConfig()
	cfg.MaxActiveHints = 1
	e := newEnv(t, cfg, cluster(6))
	if _, err := e.client("alice").Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/meta"}, For: time.Minute, Readers: 8}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client("bob").Create(e.ctx, hintclient.Hint{Paths: []string{"/data/bob/x"}, For: time.Minute, Readers: 8, DryRun: true}); code(err) != codes.ResourceExhausted {
		t.Fatalf("dry run at the global cap: %v", err)
	}
}

// Directories are listed page by page (the host answers at most its bound per call): every
// file of a directory larger than one page is found, and a directory far larger than
// max-files costs a bounded number of pages, never the whole directory.
func TestListingPaged(t *testing.T) {
	host := cluster(12)
	host.SetListBound(100)
	host.Mkdir("/big", "alice", -1)
	for i := 0; i < 250; i++ {
		host.File(fmt.Sprintf("/big/f%04d", i), "alice", 10, 3)
	}
	e := newEnv(t, hotspot.DefaultConfig(), host)
	before := host.Calls("ListStatus")
	p, err := e.client("alice").Create(e.ctx, hintclient.Hint{Paths: []string{"/big"}, For: time.Minute, Readers: 8, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 250 || host.Calls("ListStatus")-before != 3 {
		t.Fatalf("%d files in %d pages", len(p.Files), host.Calls("ListStatus")-before)
	}
	// A glob over the same directory pages too.
	p, err = e.client("alice").Create(e.ctx, hintclient.Hint{Paths: []string{"/big/f01*"}, For: time.Minute, Readers: 8, DryRun: true})
	if err != nil || len(p.Files) != 100 {
		t.Fatalf("glob: %v, %d files", err, len(p.Files))
	}

	cfg := hotspot.DefaultConfig()
	cfg.MaxFiles = 10
	host2 := cluster(12)
	host2.SetListBound(100)
	host2.Mkdir("/huge", "alice", -1)
	for i := 0; i < 5000; i++ {
		host2.Mkdir(fmt.Sprintf("/huge/d%05d", i), "alice", -1) // directories only: no file ends the walk
	}
	e2 := newEnv(t, cfg, host2)
	before = host2.Calls("ListStatus")
	_, err = e2.client("alice").Create(e2.ctx, hintclient.Hint{Paths: []string{"/huge"}, For: time.Minute, Readers: 8, DryRun: true})
	if code(err) == codes.OK {
		t.Fatal("a tree of empty directories planned something")
	}
	// scan budget 4*10 + 4000 entries: about 41 pages of 100 (and the listed directories), far
	// below the 5,001 listings of the whole tree.
	if n := host2.Calls("ListStatus") - before; n > 200 {
		t.Fatalf("%d ListStatus calls for a tree of 5,000 directories and max-files 10", n)
	}
}

// A state.dir others may write is reported: the records are what recovery trusts.
func TestWritableStateDirReported(t *testing.T) {
	host := cluster(6)
	host.SetPerm("/", 0o1777)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	_, problems, err := e.client("hdfs").ListAll(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "state.dir / has mode 01777") {
		t.Fatalf("problems %q", problems)
	}
}
