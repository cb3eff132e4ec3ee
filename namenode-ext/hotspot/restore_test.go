package hotspot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
)

const markerName = "user.newtricks.hotspot"

func (e *env) create(user string, paths []string, readers int, d time.Duration) *hotspot.Plan {
	e.t.Helper()
	p, err := e.client(user).Create(e.ctx, hintclient.Hint{Paths: paths, For: d, Readers: readers})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) done(id string) *hotspot.HintStatus {
	e.t.Helper()
	st, err := e.client("alice").Done(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// A file renamed during its window is still restored: it is tracked by inode id.
func TestRenamedFileRestored(t *testing.T) {
	host := cluster(12)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	p := e.create("alice", []string{"/ckpt/s1/meta"}, 20, time.Minute)
	host.Rename("/ckpt/s1/meta", "/ckpt/s1/meta.moved")
	e.tick()
	st, _ := e.client("alice").Status(e.ctx, p.HintID)
	if st.Files[0].Path != "/ckpt/s1/meta.moved" {
		t.Fatalf("path not followed: %+v", st.Files[0])
	}
	e.crash() // and recovery finds it by id too
	e.clk.add(2 * time.Minute)
	e.tick()
	if host.Rep("/ckpt/s1/meta.moved") != 3 {
		t.Fatalf("renamed file left at %d", host.Rep("/ckpt/s1/meta.moved"))
	}
	if _, ok := host.XAttr("/ckpt/s1/meta.moved", markerName); ok || len(host.XAttrNames("/")) != 0 {
		t.Fatal("state left behind")
	}
}

// Two hints on one file, ended in either order, with a crash between: the file ends at its
// original factor, and at the remaining hint's target in between.
func TestOverlapEveryOrderWithCrash(t *testing.T) {
	for _, firstBig := range []bool{true, false} {
		t.Run(fmt.Sprintf("big_first=%v", firstBig), func(t *testing.T) {
			host := cluster(30)
			e := newEnv(t, hotspot.DefaultConfig(), host)
			small := e.create("alice", []string{"/ckpt/s1/meta"}, 12, time.Hour) // 6
			big := e.create("alice", []string{"/ckpt/s1/meta"}, 20, time.Hour)   // 10
			if host.Rep("/ckpt/s1/meta") != 10 {
				t.Fatalf("factor %d", host.Rep("/ckpt/s1/meta"))
			}
			first, second, between := small, big, 10
			if firstBig {
				first, second, between = big, small, 6
			}
			e.done(first.HintID)
			if got := host.Rep("/ckpt/s1/meta"); got != between {
				t.Fatalf("after the first: %d, want %d", got, between)
			}
			e.crash()
			if got := host.Rep("/ckpt/s1/meta"); got != between {
				t.Fatalf("after recovery: %d, want %d", got, between)
			}
			e.done(second.HintID)
			if got := host.Rep("/ckpt/s1/meta"); got != 3 {
				t.Fatalf("after both: %d, want 3", got)
			}
			if _, ok := host.XAttr("/ckpt/s1/meta", markerName); ok {
				t.Fatal("marker left")
			}
		})
	}
}

// A factor someone else sets during overlapping hints is never overwritten, whatever the
// order the hints end in and with a crash in between.
func TestOutsideChangeRespected(t *testing.T) {
	for _, crashAt := range []string{"none", "before-first", "between"} {
		for _, firstBig := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/big_first=%v", crashAt, firstBig), func(t *testing.T) {
				host := cluster(30)
				e := newEnv(t, hotspot.DefaultConfig(), host)
				small := e.create("alice", []string{"/ckpt/s1/meta"}, 12, time.Hour)
				big := e.create("alice", []string{"/ckpt/s1/meta"}, 20, time.Hour)
				host.SetRep("/ckpt/s1/meta", 9) // the admin
				first, second := small, big
				if firstBig {
					first, second = big, small
				}
				if crashAt == "before-first" {
					e.crash()
				}
				st := e.done(first.HintID)
				if crashAt == "between" {
					e.crash()
				}
				e.done(second.HintID)
				if got := host.Rep("/ckpt/s1/meta"); got != 9 {
					t.Fatalf("admin's 9 overwritten: %d", got)
				}
				if _, ok := host.XAttr("/ckpt/s1/meta", markerName); ok {
					t.Fatal("marker left on an externally changed file")
				}
				if crashAt == "none" && st.Files[0].Result != hotspot.ResultExternal {
					t.Fatalf("result %+v", st.Files[0])
				}
				if len(host.XAttrNames("/")) != 0 {
					t.Fatalf("records left: %v", host.XAttrNames("/"))
				}
			})
		}
	}
}

// A new hint on a file whose factor an admin changed after another hint raised it: the file
// is let go by both, at the admin's factor.
func TestOutsideChangeThenNewHint(t *testing.T) {
	host := cluster(30)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	a := e.create("alice", []string{"/ckpt/s1/meta"}, 12, time.Hour)
	host.SetRep("/ckpt/s1/meta", 5)
	b := e.create("alice", []string{"/ckpt/s1/meta", "/ckpt/s1/emb-0"}, 20, time.Hour)
	if b.Files[0].Path != "/ckpt/s1/meta" || !strings.Contains(b.Files[0].Note, "changed by someone else") {
		t.Fatalf("plan %+v", b.Files)
	}
	e.done(a.HintID)
	e.done(b.HintID)
	if host.Rep("/ckpt/s1/meta") != 5 || host.Rep("/ckpt/s1/emb-0") != 3 {
		t.Fatalf("meta %d emb-0 %d", host.Rep("/ckpt/s1/meta"), host.Rep("/ckpt/s1/emb-0"))
	}
}

// A crash between writing the marker and changing the factor, while raising and while
// restoring: recovery recognises its own half-done change and finishes it.
func TestCrashMidChange(t *testing.T) {
	host := cluster(12)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	a := e.create("alice", []string{"/ckpt/s1/meta"}, 12, time.Hour) // 6
	host.CrashAfterMarker()
	b, err := e.client("alice").Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/meta"}, For: time.Hour, Readers: 20})
	if err != nil {
		t.Fatal(err)
	}
	if host.Rep("/ckpt/s1/meta") != 6 || !b.Partial {
		t.Fatalf("factor %d plan %+v", host.Rep("/ckpt/s1/meta"), b.Files)
	}
	e.crash() // the marker says 10 in flight from 6; the factor is 6: the raise is finished
	if host.Rep("/ckpt/s1/meta") != 10 {
		t.Fatalf("half-done raise not finished: %d", host.Rep("/ckpt/s1/meta"))
	}
	host.CrashAfterMarker()
	e.done(b.HintID) // marker says 6 in flight from 10, factor still 10
	e.crash()
	if host.Rep("/ckpt/s1/meta") != 6 {
		t.Fatalf("half-done restore not finished: %d", host.Rep("/ckpt/s1/meta"))
	}
	e.done(a.HintID)
	host.CrashAfterMarker()
	e.tick()
	if host.Rep("/ckpt/s1/meta") != 3 {
		t.Fatalf("final: %d", host.Rep("/ckpt/s1/meta"))
	}
	if len(host.XAttrNames("/")) != 0 {
		t.Fatalf("records left %v", host.XAttrNames("/"))
	}
}

// An undecodable record or marker is reported to the superuser and in metrics, left in
// place, and holds back nothing else.
func TestUndecodableStateReported(t *testing.T) {
	host := cluster(12)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	good := e.create("alice", []string{"/ckpt/s1/meta", "/ckpt/s1/emb-0"}, 12, time.Minute)
	host.SetXAttrRaw("/", "user.newtricks.hotspot.hint.hbad", []byte("not a record"))
	host.SetXAttrRaw("/ckpt/s1/emb-0", markerName, []byte("{broken"))
	e.crash()
	_, problems, err := e.client("hdfs").ListAll(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 || !strings.Contains(strings.Join(problems, "\n"), "hint.hbad") || !strings.Contains(strings.Join(problems, "\n"), "emb-0") {
		t.Fatalf("problems %q", problems)
	}
	if _, p, _ := e.client("alice").ListAll(e.ctx); len(p) != 0 {
		t.Fatal("problems shown to a plain user")
	}
	e.clk.add(2 * time.Minute)
	e.tick()
	if host.Rep("/ckpt/s1/meta") != 3 {
		t.Fatal("the good file was held back")
	}
	if host.Rep("/ckpt/s1/emb-0") != 6 {
		t.Fatal("a file with an unreadable marker was changed")
	}
	if _, ok := host.XAttr("/", "user.newtricks.hotspot.hint.hbad"); !ok {
		t.Fatal("unreadable record removed")
	}
	if _, ok := host.XAttr("/", "user.newtricks.hotspot.hint."+good.HintID); ok {
		t.Fatal("good record kept")
	}
}

// One file that keeps failing does not hold back the hint's other files.
func TestPersistentFileErrorIsolated(t *testing.T) {
	host := cluster(12)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	p := e.create("alice", []string{"/ckpt/s1"}, 12, time.Minute)
	host.FailChange("/ckpt/s1/emb-1", status.Error(codes.PermissionDenied, "AccessControlException: no"))
	e.clk.add(2 * time.Minute)
	e.tick()
	e.tick()
	if host.Rep("/ckpt/s1/meta") != 3 || host.Rep("/ckpt/s1/emb-0") != 3 || host.Rep("/ckpt/s1/emb-1") != 6 {
		t.Fatalf("factors %d %d %d", host.Rep("/ckpt/s1/meta"), host.Rep("/ckpt/s1/emb-0"), host.Rep("/ckpt/s1/emb-1"))
	}
	st, _ := e.client("alice").Status(e.ctx, p.HintID)
	var bad hotspot.FileProgress
	for _, f := range st.Files {
		if f.Path == "/ckpt/s1/emb-1" {
			bad = f
		}
	}
	if st.State != hotspot.StateRestoring || !strings.Contains(bad.Error, "AccessControlException") {
		t.Fatalf("status %+v", st)
	}
	host.FailChange("/ckpt/s1/emb-1", nil)
	e.tick()
	if host.Rep("/ckpt/s1/emb-1") != 3 || len(host.XAttrNames("/")) != 0 {
		t.Fatal("not finished once the error cleared")
	}
}

// Limits are boosted only while there is copying to do, and put back after a bounded time
// even if the hint never gets ready, with the reason in its status.
func TestBoostBounded(t *testing.T) {
	cfg := hotspot.DefaultConfig()
	cfg.BoostMaxDuration = time.Minute
	host := cluster(12)
	e := newEnv(t, cfg, host)
	p := e.create("alice", []string{"/ckpt/s1/meta"}, 12, time.Hour)
	if host.Conf(hotspot.KeyMaxStreams) != "32" {
		t.Fatal("not boosted while copying")
	}
	e.clk.add(30 * time.Second)
	e.tick()
	if host.Conf(hotspot.KeyMaxStreams) != "32" {
		t.Fatal("released early")
	}
	e.clk.add(31 * time.Second) // a block that never gets its replicas
	e.tick()
	if host.Conf(hotspot.KeyMaxStreams) != "2" || host.Conf(hotspot.KeyMaxStreamsHard) != "4" {
		t.Fatal("not put back after boost.max-duration")
	}
	st, _ := e.client("alice").Status(e.ctx, p.HintID)
	if st.State != hotspot.StatePreparing || len(st.Notes) != 1 || !strings.Contains(st.Notes[0], "still short") {
		t.Fatalf("status %+v", st)
	}
	e.tick()
	if host.Conf(hotspot.KeyMaxStreams) != "2" {
		t.Fatal("boosted again for the same hint")
	}
}

// Readiness looks only at the blocks still short, in batches; the balanced-reads set follows
// the held files.
func TestReadinessCostAndBalancedSet(t *testing.T) {
	host := cluster(12)
	host.File("/big/f", "alice", 128*100, 3) // 100 blocks
	e := newEnv(t, hotspot.DefaultConfig(), host)
	p := e.create("alice", []string{"/big/f", "/ckpt/s1/meta"}, 12, time.Hour)
	e.tick()
	if b := host.Balanced(); len(b) != 2 || b[0] != "/big/f" {
		t.Fatalf("balanced %v", b)
	}
	_, scanned0, _ := host.Counters()
	host.PlaceAll()
	e.tick()
	e.tick()
	_, scanned1, _ := host.Counters()
	st, _ := e.client("alice").Status(e.ctx, p.HintID)
	if !st.Ready() {
		t.Fatal("not ready")
	}
	if scanned1-scanned0 > 108 { // 100 + 8 blocks once, then nothing
		t.Fatalf("ready files polled again: %d blocks", scanned1-scanned0)
	}
	e.done(p.HintID)
	e.tick()
	if b := host.Balanced(); len(b) != 0 {
		t.Fatalf("balanced after done %v", b)
	}
}

// A 10,000-file hint costs a bounded number of host calls: batched, not one per file.
func TestTenThousandFiles(t *testing.T) {
	host := nnhosttest.NewFakeHost(12)
	host.Mkdir("/ckpt", "alice", -1)
	for i := 0; i < 10000; i++ {
		host.File(fmt.Sprintf("/ckpt/big/shard-%05d", i), "alice", 1000, 3)
	}
	host.SetAutoPlace(true)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	p := e.create("alice", []string{"/ckpt/big"}, 12, time.Minute)
	if len(p.Files) != 10000 || p.Partial {
		t.Fatalf("%d files, partial %v, skipped %+v", len(p.Files), p.Partial, p.Skipped)
	}
	e.tick()
	e.tick() // at most 8192 files are looked at per tick
	st, _ := e.client("alice").Status(e.ctx, p.HintID)
	if !st.Ready() {
		t.Fatal("not ready")
	}
	e.clk.add(2 * time.Minute)
	e.tick()
	if host.Rep("/ckpt/big/shard-09999") != 3 || len(host.XAttrNames("/")) != 0 {
		t.Fatal("not restored")
	}
	sets, inspects, quotas := host.Calls("SetReplications"), host.Calls("InspectFiles"), host.Calls("GetQuotaUsage")
	t.Logf("10,000 files: %d SetReplications, %d InspectFiles, %d GetQuotaUsage, %d CheckAccess calls",
		sets, inspects, quotas, host.Calls("CheckAccess"))
	if sets > 2*(10000/512+1) || inspects > 2*(10000/512+1) || quotas > 10000/512+1 || host.Calls("GetContentSummary") != 0 {
		t.Fatalf("calls: set %d inspect %d quota %d", sets, inspects, quotas)
	}
}
