package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/newtricks/newtricks/namenode-ext/events"
	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

var _ Host = (*nnhosttest.FakeHost)(nil)

// aliceHost is dc-a's NameNode with the checkpoint directories these tests name, all alice's
// (the mirror reads a checkpoint's owner from its directory).
func aliceHost() *nnhosttest.FakeHost {
	h := nnhosttest.NewFakeHost(3)
	for _, d := range []string{"/ckpt/llama/step_5", "/ckpt/llama/step_7", "/ckpt/llama/step_9", "/ckpt/j/step_1",
		"/ckpt/j/step_2", "/ckpt/huge/step_1", "/ckpt/a/step_1", "/ckpt/b/step_1", "/ckpt/c/step_1", "/rn/gpt/step_000007.tmp"} {
		h.Mkdir(d, "alice", -1)
	}
	return h
}

func testEngine(t *testing.T) *Engine {
	t.Helper()
	conf := baseConf()
	conf["newtricks.mirror.rules"] = "ck,rn"
	conf["newtricks.mirror.rule.rn.source"] = "/rn/{job}/step_{step}"
	conf["newtricks.mirror.rule.rn.completion"] = "rename"
	conf["newtricks.mirror.rule.rn.temp"] = "/rn/{job}/step_{step}.tmp"
	cfg, err := ConfigFromMap(conf)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg, aliceHost(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func ns(typ, p, dst string, size int64) *events.Namespace {
	return &events.Namespace{Type: typ, Path: p, DstPath: dst, Size: size, Time: time.Now()}
}

// waitResolved waits for the background owner lookup of a checkpoint.
func waitResolved(t *testing.T, e *Engine, k Key) *checkpoint {
	t.Helper()
	for i := 0; i < 200; i++ {
		e.mu.Lock()
		c := e.ckpts[k]
		ok := c != nil && c.resolved
		e.mu.Unlock()
		if ok {
			return c
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("checkpoint %v not resolved", k)
	return nil
}

func TestEventsBuildCheckpoints(t *testing.T) {
	e := testEngine(t)
	ctx := context.Background()
	e.handle(ctx, ns("CLOSE", "/ckpt/llama/step_5/a.pt", "", 10))
	e.handle(ctx, ns("CLOSE", "/ckpt/llama/step_5/sub/b.pt", "", 20))
	e.handle(ctx, ns("CLOSE", "/elsewhere/step_5/c.pt", "", 30)) // no rule
	k := Key{Rule: "ck", Job: "llama", Step: 5}
	c := waitResolved(t, e, k)
	e.mu.Lock()
	if len(c.files) != 2 || c.bytesTotal != 30 || c.state != StateOpen || c.owner != "alice" || c.dest != "/ckpt/llama/step_5" {
		t.Fatalf("checkpoint %+v", c)
	}
	e.mu.Unlock()
	e.handle(ctx, ns("CLOSE", "/ckpt/llama/step_5/_SUCCESS", "", 0))
	e.mu.Lock()
	if !c.complete || c.state != StateCopying || c.files["_SUCCESS"] == nil {
		t.Fatalf("marker did not complete the checkpoint: %v %v", c.complete, c.state)
	}
	e.mu.Unlock()
	// A file of the checkpoint deleted: it fails, and stays failed.
	e.handle(ctx, ns("UNLINK", "/ckpt/llama/step_5/a.pt", "", 0))
	e.handle(ctx, ns("CLOSE", "/ckpt/llama/step_5/a.pt", "", 10))
	e.mu.Lock()
	if c.state != StateFailed || !strings.Contains(c.err, "source changed") || e.ckpts[k] != c {
		t.Fatalf("after unlink: %v %q", c.state, c.err)
	}
	e.mu.Unlock()
}

func TestRenameCompletes(t *testing.T) {
	e := testEngine(t)
	ctx := context.Background()
	e.handle(ctx, ns("CLOSE", "/rn/gpt/step_000007.tmp/w.pt", "", 5))
	k := Key{Rule: "rn", Job: "gpt", Step: 7}
	c := waitResolved(t, e, k)
	e.handle(ctx, ns("RENAME", "/rn/gpt/step_000007.tmp", "/rn/gpt/step_000007", 0))
	e.mu.Lock()
	defer e.mu.Unlock()
	if !c.complete || c.srcDir != "/rn/gpt/step_000007" || c.dest != "/rn/gpt/step_000007" || e.byDir["/rn/gpt/step_000007"] != c {
		t.Fatalf("after rename: complete=%v src=%s dest=%s", c.complete, c.srcDir, c.dest)
	}
}

func TestUrgentFirstAndBulkWaits(t *testing.T) {
	e := testEngine(t)
	ctx := context.Background()
	e.handle(ctx, ns("CLOSE", "/ckpt/j/step_1/bulk.pt", "", 100))
	waitResolved(t, e, Key{Rule: "ck", Job: "j", Step: 1})
	e.mu.Lock()
	e.recovered = true
	e.mu.Unlock()
	if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: "j", Step: 2}, "alice", false); err != nil {
		t.Fatal(err) // not seen yet: urgent from its first file
	}
	e.handle(ctx, ns("CLOSE", "/ckpt/j/step_2/urgent.pt", "", 100))
	waitResolved(t, e, Key{Rule: "ck", Job: "j", Step: 2})
	e.mu.Lock()
	c, f, _, _ := e.pickLocked()
	if c == nil || f.rel != "urgent.pt" {
		t.Fatalf("picked %v, want the urgent checkpoint's file", f)
	}
	f.state = fileCopying
	e.recountUrgentLocked()
	if c2, f2, _, _ := e.pickLocked(); c2 != nil {
		t.Fatalf("bulk file %s picked while the urgent checkpoint has work in flight", f2.rel)
	}
	f.state = fileVerified
	e.recountUrgentLocked()
	if _, f3, _, _ := e.pickLocked(); f3 == nil || f3.rel != "bulk.pt" {
		t.Fatalf("bulk not resumed: %v", f3)
	}
	e.mu.Unlock()
	// Another user may not mark alice's checkpoint urgent.
	if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: "j", Step: 1}, "bob", false); err == nil {
		t.Fatal("bob marked alice's checkpoint urgent")
	}
}

// A rule matching more files than newtricks.mirror.max-files fails that checkpoint with the
// key in its status, holding at most max-files records; checkpoints beyond
// newtricks.mirror.max-checkpoints are not tracked (counted in events_dropped, logged).
func TestBoundsReportedClearly(t *testing.T) {
	conf := baseConf()
	conf["newtricks.mirror.max-files"] = "50"
	conf["newtricks.mirror.max-checkpoints"] = "2"
	cfg, err := ConfigFromMap(conf)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg, aliceHost(), nil)
	if err != nil {
		t.Fatal(err)
	}
	e.recovered = true
	ctx := context.Background()
	for i := 0; i < 10000; i++ {
		e.handle(ctx, ns("CLOSE", fmt.Sprintf("/ckpt/huge/step_1/t_%05d.pt", i), "", 15000))
	}
	k := Key{Rule: "ck", Job: "huge", Step: 1}
	e.mu.Lock()
	c := e.ckpts[k]
	if c == nil || c.state != StateFailed || len(c.files) > 50 {
		e.mu.Unlock()
		t.Fatalf("checkpoint over max-files: %+v", c)
	}
	st := e.statusLocked(c)
	e.mu.Unlock()
	if st.State != pb.CheckpointStatus_FAILED || !strings.Contains(st.Error, "more than 50 (newtricks.mirror.max-files)") {
		t.Fatalf("status does not say why: %v %q", st.State, st.Error)
	}
	// Two checkpoints in flight at most: the third is not tracked, and that is counted.
	e.handle(ctx, ns("CLOSE", "/ckpt/a/step_1/x.pt", "", 1))
	e.handle(ctx, ns("CLOSE", "/ckpt/b/step_1/x.pt", "", 1))
	before := e.dropped.Load()
	e.handle(ctx, ns("CLOSE", "/ckpt/c/step_1/x.pt", "", 1))
	e.mu.Lock()
	_, tracked := e.ckpts[Key{Rule: "ck", Job: "c", Step: 1}]
	e.mu.Unlock()
	if tracked || e.dropped.Load() != before+1 {
		t.Fatalf("third checkpoint tracked=%v, dropped %d -> %d", tracked, before, e.dropped.Load())
	}
}

func TestDestFullIsRetriedAndNamed(t *testing.T) {
	for _, msg := range []string{
		"org.apache.hadoop.hdfs.protocol.DSQuotaExceededException: The DiskSpace quota of /q is exceeded: quota = 1048576 B = 1 MB but diskspace consumed = 402653184 B = 384 MB",
		"rename /tmp/newtricks-mirror/x to /q/step_1 on dc-b: org.apache.hadoop.hdfs.protocol.NSQuotaExceededException: The NameSpace quota (directories and files) of directory /q is exceeded",
		"File /tmp/x could only be written to 0 of the 1 minReplication nodes. There are 1 datanode(s) running",
	} {
		err := errors.New(msg)
		if !destFull(err) || !strings.HasPrefix(retryNote(err), "dc-b out of space or quota: ") {
			t.Errorf("not recognised as dc-b out of space: %s", msg)
		}
	}
	if destFull(errors.New("connection refused")) {
		t.Error("a connection error taken for a full destination")
	}
}

// The durable txid marked on the event sink's cursor stays below every event whose effect is
// not in the journal yet; replays of durable events are skipped.
func TestDurableTxid(t *testing.T) {
	e := testEngine(t)
	ctx := context.Background()
	ev := func(txid int64, typ, p string) *events.Namespace {
		n := ns(typ, p, "", 10)
		n.Txid = txid
		return n
	}
	e.handle(ctx, ev(10, "CLOSE", "/ckpt/j/step_1/a.pt"))
	e.handle(ctx, ev(11, "CLOSE", "/ckpt/j/step_1/b.pt"))
	e.handle(ctx, ev(12, "CLOSE", "/elsewhere/x")) // no rule: durable at once
	k := Key{Rule: "ck", Job: "j", Step: 1}
	c := waitResolved(t, e, k)
	if d := e.durableTxid(); d != 9 {
		t.Fatalf("two files queued from txids 10, 11: durable %d, want 9", d)
	}
	e.mu.Lock()
	c.metaSaved = true
	c.files["a.pt"].state = fileVerified
	e.mu.Unlock()
	if d := e.durableTxid(); d != 10 {
		t.Fatalf("a.pt journaled: durable %d, want 10", d)
	}
	e.mu.Lock()
	c.files["b.pt"].state = fileVerified
	e.mu.Unlock()
	if d := e.durableTxid(); d != 12 {
		t.Fatalf("both journaled: durable %d, want 12", d)
	}
	e.handle(ctx, ev(13, "CLOSE", "/ckpt/j/step_1/_SUCCESS"))
	e.mu.Lock()
	c.files["_SUCCESS"].state = fileVerified
	dirty := c.metaDirty
	e.mu.Unlock()
	if d := e.durableTxid(); d != 12 || dirty != 13 {
		t.Fatalf("completion not saved: durable %d (want 12), dirty %d", d, dirty)
	}
	e.mu.Lock()
	c.metaDirty = 0 // as saveMeta does once the record with the completion is written
	c.state, c.savedState = StateCommitted, StateCommitted
	e.mu.Unlock()
	if d := e.durableTxid(); d != 13 {
		t.Fatalf("committed and saved: durable %d, want 13", d)
	}
	// A replay after a restart: events up to the journal's txid are skipped, and later events
	// a committed mirror already covered do not start a second mirror.
	e.mu.Lock()
	e.journalTxid = 11
	e.mu.Unlock()
	e.handle(ctx, ev(10, "CLOSE", "/ckpt/j/step_2/a.pt"))
	e.handle(ctx, ev(13, "CLOSE", "/ckpt/j/step_1/_SUCCESS"))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ckpts[Key{Rule: "ck", Job: "j", Step: 2}] != nil {
		t.Fatal("an event at or below the journal's txid was applied")
	}
	if e.ckpts[k] != c || c.state != StateCommitted {
		t.Fatalf("a replayed event restarted the committed mirror: %v", e.ckpts[k].state)
	}
}

// TestWaitSeesCommitDuringPause: a progress change makes Wait hold its next update for the
// interval, but a commit during that pause ends it at once.
func TestWaitSeesCommitDuringPause(t *testing.T) {
	e := testEngine(t)
	ctx := context.Background()
	e.handle(ctx, ns("CLOSE", "/ckpt/llama/step_7/a.pt", "", 10))
	k := Key{Rule: "ck", Job: "llama", Step: 7}
	c := waitResolved(t, e, k)
	sent := make(chan pb.CheckpointStatus_State, 16)
	done := make(chan error, 1)
	began := time.Now()
	go func() {
		done <- e.Wait(ctx, k, "alice", false, 5*time.Second, func(st *pb.CheckpointStatus) error {
			sent <- st.State
			return nil
		})
	}()
	<-sent // the first status goes at once
	e.mu.Lock()
	e.changedLocked(c) // progress: Wait now pauses for the interval
	e.mu.Unlock()
	time.Sleep(50 * time.Millisecond)
	e.mu.Lock()
	c.state = StateCommitted
	e.changedLocked(c)
	e.mu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Wait did not return within 2 s of the commit (interval 5 s)")
	}
	if last := <-sent; last != pb.CheckpointStatus_COMMITTED {
		t.Fatalf("last status %v", last)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("Wait took %v", d)
	}
}

// TestCommitStartsOnKnownRecords: the commit may start (and write the manifest) once every
// file's record is checked, while dc-b still completes the last ones; it renames only once
// all are journaled, and a file sent back to the queue meanwhile ends that attempt.
func TestCommitStartsOnKnownRecords(t *testing.T) {
	e := testEngine(t)
	ctx := context.Background()
	e.handle(ctx, ns("CLOSE", "/ckpt/llama/step_9/a.pt", "", 10))
	e.handle(ctx, ns("CLOSE", "/ckpt/llama/step_9/b.pt", "", 20))
	c := waitResolved(t, e, Key{Rule: "ck", Job: "llama", Step: 9})
	e.mu.Lock()
	a, b := c.files["a.pt"], c.files["b.pt"]
	a.state = fileVerified
	c.filesDone = 1
	b.state = fileCopying
	known := c.recordsKnownLocked()
	e.mu.Unlock()
	if known {
		t.Fatal("records known while b.pt is still streaming")
	}
	e.recordKnown(c, b, fileRecord{Path: "b.pt", Size: 20})
	e.mu.Lock()
	known = c.recordsKnownLocked()
	e.mu.Unlock()
	if !known {
		t.Fatal("records not known after b.pt's was checked")
	}

	waited := make(chan error, 1)
	go func() { waited <- e.waitJournaled(ctx, c) }()
	time.Sleep(30 * time.Millisecond)
	select {
	case err := <-waited:
		t.Fatalf("waitJournaled returned %v before b.pt was journaled", err)
	default:
	}
	e.mu.Lock()
	b.state = fileQueued // its close on dc-b failed: copied again later
	e.changedLocked(c)
	e.mu.Unlock()
	if err := <-waited; !errors.Is(err, errRequeued) {
		t.Fatalf("waitJournaled: %v, want errRequeued", err)
	}

	// A new attempt forgets the old record until it is checked again.
	e.mu.Lock()
	b.state, b.recReady = fileCopying, false
	known = c.recordsKnownLocked()
	e.mu.Unlock()
	if known {
		t.Fatal("a new attempt counted as known")
	}
	e.recordKnown(c, b, fileRecord{Path: "b.pt", Size: 20})
	go func() { waited <- e.waitJournaled(ctx, c) }()
	e.mu.Lock()
	b.state = fileVerified
	c.filesDone = 2
	e.changedLocked(c)
	e.mu.Unlock()
	if err := <-waited; err != nil {
		t.Fatalf("waitJournaled: %v", err)
	}
}

// TestManifestPrefix: the head sent ahead is the start of the manifest however many records
// follow.
func TestManifestPrefix(t *testing.T) {
	m := Manifest{V: 1, ID: "ck.llama.3.x", Rule: "ck", Job: "llama", Step: 3, Source: "/ckpt/llama/step_3", Owner: "alice", CompletedAt: 1}
	p := manifestPrefix(m)
	for _, files := range [][]fileRecord{nil, {}, {{Path: "a", Size: 1}}, {{Path: "a"}, {Path: "b/c", Checksum: "00"}}} {
		m.Files = files
		b, _ := json.MarshalIndent(m, "", " ")
		if !bytes.HasPrefix(b, p) {
			t.Fatalf("%q does not start with %q", b, p)
		}
		var back Manifest
		if err := json.Unmarshal(b, &back); err != nil || back.ID != m.ID || len(back.Files) != len(files) {
			t.Fatalf("%v %+v", err, back)
		}
	}
	m.Source = "/ckpt/llama/step_3.tmp"
	if b, _ := json.MarshalIndent(m, "", " "); bytes.HasPrefix(b, p) {
		t.Fatal("another head matched")
	}
}

// TestCleanupWaitsAfterCommit: a commit's housekeeping (journal segments, retention) runs
// CleanupDelay after it, one checkpoint at a time; it is skipped if the engine stops first,
// and runs at once with a delay of 0.
func TestCleanupWaitsAfterCommit(t *testing.T) {
	e := testEngine(t)
	if e.cfg.CleanupDelay != 30*time.Second {
		t.Fatalf("default cleanup delay %v, want 30s", e.cfg.CleanupDelay)
	}
	const delay = 300 * time.Millisecond
	e.cfg.CleanupDelay = delay
	ran := make(chan *checkpoint, 4)
	var running, overlap atomic.Int32
	e.cleanupHook = func(c *checkpoint) {
		if running.Add(1) > 1 {
			overlap.Add(1)
		}
		time.Sleep(50 * time.Millisecond)
		running.Add(-1)
		ran <- c
	}
	ctx := context.Background()
	c1 := &checkpoint{key: Key{Rule: "ck", Job: "j", Step: 1}}
	c2 := &checkpoint{key: Key{Rule: "ck", Job: "j", Step: 2}}
	began := time.Now()
	e.cleanupLater(ctx, c1)
	e.cleanupLater(ctx, c2)
	select {
	case c := <-ran:
		t.Fatalf("housekeeping of %v ran at once", c.key)
	case <-time.After(delay / 2):
	}
	for i := 0; i < 2; i++ {
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Fatal("housekeeping never ran")
		}
	}
	if d := time.Since(began); d < delay {
		t.Fatalf("housekeeping done %v after the commits, before the %v delay", d, delay)
	}
	if overlap.Load() != 0 {
		t.Fatal("two checkpoints' housekeeping ran at once")
	}

	// The engine stops within the delay: skipped (recovery and the next commit catch up).
	cctx, cancel := context.WithCancel(ctx)
	e.cleanupLater(cctx, c1)
	cancel()
	select {
	case <-ran:
		t.Fatal("housekeeping ran after the engine stopped")
	case <-time.After(2 * delay):
	}

	// 0: right after the commit, before cleanupLater returns.
	e.cfg.CleanupDelay = 0
	e.cleanupLater(ctx, c2)
	select {
	case <-ran:
	default:
		t.Fatal("delay 0: housekeeping did not run at once")
	}
}
