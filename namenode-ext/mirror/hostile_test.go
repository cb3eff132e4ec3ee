package mirror

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
)

// hostileEngine is a recovered engine with rule ck (marker, /ckpt/{job}/step_{step}) and rule
// sig (signal, /sig/{job}/step_{step}) on host.
func hostileEngine(t *testing.T, host *nnhosttest.FakeHost, extra map[string]string) *Engine {
	t.Helper()
	conf := baseConf()
	conf["newtricks.mirror.rules"] = "ck,sig"
	conf["newtricks.mirror.rule.sig.source"] = "/sig/{job}/step_{step}"
	conf["newtricks.mirror.rule.sig.completion"] = "signal"
	for k, v := range extra {
		conf[k] = v
	}
	cfg, err := ConfigFromMap(conf)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg, host, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.recovered = true
	return e
}

func codeOf(err error) codes.Code { return status.Code(coproc.ToStatus(err)) }

func (e *Engine) tracked() (ckpts, pending int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.ckpts), len(e.urgentSoon)
}

// Urgent stores nothing for a key no checkpoint can have (a 1 MiB job name: the 3 GB RSS
// of finding 3), nor for a caller who may not write where the checkpoint would be; what it
// stores is bounded per user and in total, and expires.
func TestUrgentBoundedAndChecked(t *testing.T) {
	host := aliceHost()
	host.Mkdir("/ckpt", "alice", -1)
	host.Mkdir("/ckpt/shared", "alice", -1)
	host.Grant("/ckpt/shared", "bob")
	e := hostileEngine(t, host, map[string]string{
		"newtricks.mirror.urgent.per-user": "2", "newtricks.mirror.urgent.max-pending": "3",
		"newtricks.mirror.urgent.pending-ttl": "1m",
	})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return now }
	ctx := context.Background()
	big := strings.Repeat("j", 1<<20)
	if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: big, Step: 1}, "bob", false); codeOf(err) != codes.InvalidArgument {
		t.Fatalf("1 MiB job: %v", err)
	}
	for _, job := range []string{"a/b", "..", "x\x00"} {
		if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: job, Step: 1}, "bob", false); codeOf(err) != codes.InvalidArgument {
			t.Fatalf("job %q: %v", job, err)
		}
	}
	// bob may not write /ckpt (alice's): no urgent mark for a checkpoint there.
	if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: "alicejob", Step: 9}, "bob", false); codeOf(err) != codes.PermissionDenied {
		t.Fatalf("bob under alice's /ckpt: %v", err)
	}
	// alice may (her own /ckpt): two pending marks, the third is over her share.
	for i := 1; i <= 2; i++ {
		if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: "future", Step: int64(i)}, "alice", false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: "future", Step: 3}, "alice", false); codeOf(err) != codes.ResourceExhausted {
		t.Fatalf("alice's third pending mark: %v", err)
	}
	// Marking the same key again takes nothing more.
	if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: "future", Step: 2}, "alice", false); err != nil {
		t.Fatal(err)
	}
	// The total bound holds for everybody together (an admin is counted too).
	if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: "x", Step: 1}, "hdfs", true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: "y", Step: 1}, "hdfs", true); codeOf(err) != codes.ResourceExhausted {
		t.Fatalf("over max-pending: %v", err)
	}
	if _, p := e.tracked(); p != 3 {
		t.Fatalf("%d pending marks", p)
	}
	now = now.Add(2 * time.Minute) // they expire
	if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: "future", Step: 3}, "alice", false); err != nil {
		t.Fatalf("after the ttl: %v", err)
	}
	if _, p := e.tracked(); p != 1 {
		t.Fatalf("%d pending marks after the ttl", p)
	}

	// bob may write /ckpt/shared, so he may mark a checkpoint there not seen yet; when it
	// turns out to be alice's /ckpt/shared/step_1 with no write for bob, the mark is dropped.
	if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: "shared", Step: 7}, "bob", false); err != nil {
		t.Fatalf("bob in the shared directory: %v", err)
	}
	host.Mkdir("/ckpt/shared/step_7", "alice", -1)
	e.handle(ctx, ns("CLOSE", "/ckpt/shared/step_7/a.pt", "", 1))
	c := waitResolved(t, e, Key{Rule: "ck", Job: "shared", Step: 7})
	e.mu.Lock()
	urgent := c.urgent
	e.mu.Unlock()
	if urgent {
		t.Fatal("bob's mark kept on alice's checkpoint he may not write")
	}
	// On a known checkpoint, bob needs write access too.
	if _, err := e.Urgent(ctx, Key{Rule: "ck", Job: "shared", Step: 7}, "bob", false); codeOf(err) != codes.PermissionDenied {
		t.Fatalf("bob on alice's known checkpoint: %v", err)
	}
}

// Complete on checkpoints whose directory does not exist creates nothing (before: an entry
// that never resolved; 64 of them stopped the mirror for everyone), and needs write access.
func TestCompleteOnMissingCreatesNothing(t *testing.T) {
	host := aliceHost()
	host.Mkdir("/sig/alicejob/step_1", "alice", -1)
	e := hostileEngine(t, host, map[string]string{"newtricks.mirror.max-checkpoints": "4"})
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		if _, err := e.Complete(ctx, Key{Rule: "sig", Job: "nojob", Step: int64(i)}, "bob", false); codeOf(err) != codes.NotFound {
			t.Fatalf("Complete on a missing directory: %v", err)
		}
	}
	if _, err := e.Complete(ctx, Key{Rule: "sig", Job: "alicejob", Step: 1}, "bob", false); codeOf(err) != codes.PermissionDenied {
		t.Fatalf("bob completes alice's: %v", err)
	}
	if n, _ := e.tracked(); n != 0 {
		t.Fatalf("%d checkpoints tracked after refused Completes", n)
	}
	if _, err := e.Complete(ctx, Key{Rule: "sig", Job: "alicejob", Step: 1}, "alice", false); err != nil {
		t.Fatalf("alice's own: %v", err)
	}
	if n, _ := e.tracked(); n != 1 {
		t.Fatalf("%d tracked", n)
	}
}

// A checkpoint owned by the superuser is not mirrored (the mirror would act as the superuser
// on dc-b) unless newtricks.mirror.allow-superuser; one owner's checkpoints in flight are
// bounded; a checkpoint whose directory is gone before its owner is known fails instead of
// waiting for ever.
func TestOwnerRefusedAndBounded(t *testing.T) {
	host := aliceHost()
	host.Mkdir("/ckpt/root/step_1", "hdfs", -1)
	e := hostileEngine(t, host, map[string]string{"newtricks.mirror.max-checkpoints.per-user": "2"})
	e.superuser = "hdfs"
	ctx := context.Background()
	e.handle(ctx, ns("CLOSE", "/ckpt/root/step_1/x.pt", "", 1))
	waitState(t, e, Key{Rule: "ck", Job: "root", Step: 1}, StateFailed, "allow-superuser")

	for _, j := range []string{"a", "b", "c"} {
		e.handle(ctx, ns("CLOSE", "/ckpt/"+j+"/step_1/x.pt", "", 1))
		time.Sleep(20 * time.Millisecond) // resolved one after another
	}
	failed := 0
	for _, j := range []string{"a", "b", "c"} {
		k := Key{Rule: "ck", Job: j, Step: 1}
		for i := 0; i < 200; i++ {
			e.mu.Lock()
			c := e.ckpts[k]
			done := c != nil && (c.resolved || c.state == StateFailed)
			if done && c.state == StateFailed {
				if !strings.Contains(c.err, "max-checkpoints.per-user") {
					t.Errorf("%s failed: %s", j, c.err)
				}
				failed++
			}
			e.mu.Unlock()
			if done {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if failed != 1 {
		t.Fatalf("%d of alice's 3 checkpoints refused with a per-user cap of 2", failed)
	}
	resolveGone = 50 * time.Millisecond
	defer func() { resolveGone = 20 * time.Second }()
	e.handle(ctx, ns("CLOSE", "/ckpt/ghost/step_1/x.pt", "", 1)) // no such directory
	waitState(t, e, Key{Rule: "ck", Job: "ghost", Step: 1}, StateFailed, "gone")

	e2 := hostileEngine(t, host, map[string]string{"newtricks.mirror.allow-superuser": "true"})
	e2.superuser = "hdfs"
	e2.handle(ctx, ns("CLOSE", "/ckpt/root/step_1/x.pt", "", 1))
	if c := waitResolved(t, e2, Key{Rule: "ck", Job: "root", Step: 1}); c.state == StateFailed {
		t.Fatalf("allowed superuser checkpoint failed: %s", c.err)
	}
}

func waitState(t *testing.T, e *Engine, k Key, want State, errPart string) {
	t.Helper()
	for i := 0; i < 400; i++ {
		e.mu.Lock()
		c := e.ckpts[k]
		ok := c != nil && c.state == want && strings.Contains(c.err, errPart)
		e.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t.Fatalf("%v: want %s (%q), have %+v", k, want, errPart, e.ckpts[k])
}

// Retention picks only the committing owner's checkpoints of the job: bob's alicejob-step_999
// under a shared rule does not retire alice's.
func TestRetentionOnlySameOwner(t *testing.T) {
	e := testEngine(t)
	e.cfg.Rules[0].Retain = 1
	r := &e.cfg.Rules[0]
	mk := func(owner string, step int64) *checkpoint {
		c := e.newCheckpoint(r, Key{Rule: r.Name, Job: "alicejob", Step: step}, fmt.Sprint(step), fmt.Sprintf("/ckpt/alicejob/step_%d", step), fmt.Sprint("id", step))
		c.owner, c.resolved, c.state = owner, true, StateCommitted
		e.ckpts[c.key] = c
		return c
	}
	mk("alice", 1)
	mk("alice", 2)
	bobs := mk("bob", 999)
	if v := e.retentionVictims(bobs); len(v) != 0 {
		t.Fatalf("bob's commit retires %v", v[0].key)
	}
	alices := mk("alice", 3)
	v := e.retentionVictims(alices)
	if len(v) != 2 {
		t.Fatalf("alice's commit retires %d of her 2 older mirrors", len(v))
	}
	for _, o := range v {
		if o.owner != "alice" {
			t.Fatalf("retires %s's", o.owner)
		}
	}
}

// The manifest head is decoded without reading the file records (content on dc-b someone else
// may control: before, up to 512 MiB was read).
func TestManifestHeadBounded(t *testing.T) {
	head := `{"v":1,"id":"ck.j.1.ab","rule":"ck","job":"j","step":1,"source":"/ckpt/j/step_1","owner":"alice","completed_ms":5,"extra":{"x":[1,2]},"files": [`
	m, err := decodeManifestHead(strings.NewReader(head + strings.Repeat(`{"path":"a"},`, 1000)))
	if err != nil || m.ID != "ck.j.1.ab" || m.Owner != "alice" || m.Step != 1 {
		t.Fatalf("%+v %v", m, err)
	}
	if _, err := decodeManifestHead(strings.NewReader(`{"v":1,"id":"x`)); err == nil {
		t.Fatal("truncated head decoded")
	}
	if _, err := decodeManifestHead(strings.NewReader(`[1,2]`)); err == nil {
		t.Fatal("not an object decoded")
	}
	// A head longer than the bound (a huge id) is cut and refused.
	long := `{"v":1,"id":"` + strings.Repeat("x", maxManifestHead) + `"}`
	if _, err := decodeManifestHead(strings.NewReader(long[:maxManifestHead])); err == nil {
		t.Fatal("over-long head decoded")
	}
}

// Wait streams are bounded per user and in total; a checkpoint whose owner is not known yet
// is visible to nobody but administrators.
func TestWaitBoundedAndOwnerless(t *testing.T) {
	e := hostileEngine(t, aliceHost(), map[string]string{"newtricks.mirror.max-waits.per-user": "2", "newtricks.mirror.max-waits": "3"})
	var leaves []func()
	for i := 0; i < 2; i++ {
		l, err := e.enterWait("bob")
		if err != nil {
			t.Fatal(err)
		}
		leaves = append(leaves, l)
	}
	if _, err := e.enterWait("bob"); codeOf(err) != codes.ResourceExhausted {
		t.Fatalf("bob's third Wait: %v", err)
	}
	l, err := e.enterWait("carol")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.enterWait("dave"); codeOf(err) != codes.ResourceExhausted {
		t.Fatalf("over max-waits: %v", err)
	}
	l()
	for _, l := range leaves {
		l()
	}
	if _, err := e.enterWait("bob"); err != nil {
		t.Fatalf("after leaving: %v", err)
	}
	c := e.newCheckpoint(&e.cfg.Rules[0], Key{Rule: "ck", Job: "j", Step: 1}, "1", "/ckpt/j/step_1", "id")
	if err := e.allowed(c, "bob", false); !errors.Is(err, coproc.ErrPermission) {
		t.Fatalf("ownerless checkpoint visible to bob: %v", err)
	}
	if err := e.allowed(c, "hdfs", true); err != nil {
		t.Fatal(err)
	}
}

// With Kerberos, WebHDFS calls to dc-b go over HTTPS, checked against the configured CA.
func TestWebHDFSOverHTTPSWithKerberos(t *testing.T) {
	var got string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query().Get("op")
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(srv.URL, "https://")
	cfg := DefaultConfig()
	cfg.DestHTTP, cfg.DestHTTPCA, cfg.Kerberos = addr, ca, &KerberosConfig{}
	ts, err := newTimeSetter(cfg, newDialer(""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ts.base, "https://") {
		t.Fatalf("base %s", ts.base)
	}
	if err := ts.set(context.Background(), nil, "alice", "/x", time.Now()); err != nil || got != "SETTIMES" {
		t.Fatalf("settimes over https: %v (op %q)", err, got)
	}
	// Without the CA the server is not trusted.
	cfg.DestHTTPCA = ""
	ts, _ = newTimeSetter(cfg, newDialer(""), nil)
	if err := ts.set(context.Background(), nil, "alice", "/x", time.Now()); err == nil {
		t.Fatal("untrusted certificate accepted")
	}
	// Simple authentication keeps plain HTTP (no credentials to protect).
	cfg.Kerberos = nil
	ts, _ = newTimeSetter(cfg, newDialer(""), nil)
	if !strings.HasPrefix(ts.base, "http://") {
		t.Fatalf("simple: %s", ts.base)
	}
}

// A file gone from a rename rule's temporary directory but present under the final name (the
// rename happened on dc-a, its event not handled yet) is retried, not a source change; gone
// from both, it is.
func TestRenameBeforeItsEventIsRetried(t *testing.T) {
	e := testEngine(t)
	host := e.host.(*nnhosttest.FakeHost)
	tmp, final := "/rn/gpt/step_000007.tmp", "/rn/gpt/step_000007"
	r := e.rule("rn")
	c := e.newCheckpoint(r, Key{Rule: "rn", Job: "gpt", Step: 7}, "000007", tmp, "id")
	host.Mkdir(final, "alice", -1)
	host.File(final+"/a.bin", "alice", 10, 1)
	err := e.movedErr(c, tmp, tmp+"/a.bin", os.ErrNotExist)
	if errors.Is(err, ErrSourceChanged) || !errors.Is(err, errRenamePending) {
		t.Fatalf("renamed into place, event pending: %v", err)
	}
	if err := e.movedErr(c, tmp, tmp+"/gone.bin", os.ErrNotExist); !errors.Is(err, ErrSourceChanged) {
		t.Fatalf("gone from both: %v", err)
	}
	c.srcDir = final
	if err := e.movedErr(c, tmp, tmp+"/a.bin", os.ErrNotExist); !errors.Is(err, errRenamed) {
		t.Fatalf("event handled: %v", err)
	}
}
