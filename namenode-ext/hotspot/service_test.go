package hotspot_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
)

// clock is a settable time source shared by a test and its Manager.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type env struct {
	t     *testing.T
	host  *nnhosttest.FakeHost
	m     *hotspot.Manager
	clk   *clock
	conn  *grpc.ClientConn
	ctx   context.Context
	cfg   hotspot.Config
	close func()
}

// newEnv serves a Manager over real gRPC on an in-memory listener, backed by host.
func newEnv(t *testing.T, cfg hotspot.Config, host *nnhosttest.FakeHost) *env {
	t.Helper()
	e := &env{t: t, host: host, cfg: cfg, clk: &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, ctx: context.Background()}
	e.start()
	t.Cleanup(func() { e.close() })
	return e
}

func (e *env) start() {
	e.t.Helper()
	m, err := hotspot.New(e.cfg, e.host, hclog.New(&hclog.LoggerOptions{Level: hclog.Error}))
	if err != nil {
		e.t.Fatal(err)
	}
	hotspot.SetClock(m, e.clk.now)
	if err := hotspot.Recover(m, e.ctx); err != nil {
		e.t.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer(authn.ServerOptions(authn.Simple{})...)
	m.RegisterGRPC(s)
	go func() { _ = s.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		e.t.Fatal(err)
	}
	e.m, e.conn = m, conn
	e.close = func() { conn.Close(); s.Stop() }
}

// crash drops the Manager without any cleanup and starts a new one on the same host.
func (e *env) crash() {
	e.close()
	e.start()
}

func (e *env) client(user string) *hintclient.Client { return hintclient.New(e.conn, user) }
func (e *env) tick()                                 { hotspot.Tick(e.m, e.ctx) }

func cluster(live int) *nnhosttest.FakeHost {
	h := nnhosttest.NewFakeHost(live)
	h.Mkdir("/ckpt", "alice", -1)
	for _, f := range []string{"/ckpt/s1/meta", "/ckpt/s1/emb-0", "/ckpt/s1/emb-1"} {
		h.File(f, "alice", 1000, 3)
	}
	h.File("/data/bob/x", "bob", 1000, 3)
	return h
}

func code(err error) codes.Code { return status.Code(err) }

func TestHintLifecycle(t *testing.T) {
	host := cluster(12)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	c := e.client("alice")
	plan, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1"}, In: 10 * time.Second, For: 10 * time.Minute, Readers: 32})
	if err != nil {
		t.Fatal(err)
	}
	if plan.HintID == "" || len(plan.Files) != 3 || plan.Partial {
		t.Fatalf("plan %+v", plan)
	}
	for _, f := range plan.Files {
		if f.Target != 12 || f.Original != 3 {
			t.Fatalf("file %+v, want 3 -> 12 (capped at live DataNodes)", f)
		}
		if host.Rep(f.Path) != 12 {
			t.Fatalf("%s factor %d", f.Path, host.Rep(f.Path))
		}
	}
	if plan.BytesToCopy != 3*9*1000 || !strings.Contains(strings.Join(plan.Notes, ";"), "1/12 of the readers") {
		t.Fatalf("bytes %d notes %q", plan.BytesToCopy, plan.Notes)
	}
	if plan.Deadline.Sub(e.clk.now()) != 10*time.Minute+10*time.Second || !plan.EstimatedReady.After(e.clk.now()) {
		t.Fatalf("deadline %v ready %v", plan.Deadline, plan.EstimatedReady)
	}
	// Durable before anything else: the registry and the per-file marker.
	names := host.XAttrNames("/")
	if len(names) != 2 || names[0] != "user.newtricks.hotspot.hint."+plan.HintID || names[1] != "user.newtricks.hotspot.limits" {
		t.Fatalf("state xattrs %v", names)
	}
	if v, ok := host.XAttr("/ckpt/s1/meta", "user.newtricks.hotspot"); !ok || !strings.Contains(string(v), `"o":3`) {
		t.Fatalf("marker %q", v)
	}
	if host.Conf(hotspot.KeyMaxStreams) != "32" || host.Conf(hotspot.KeyMaxStreamsHard) != "64" || host.Conf(hotspot.KeyWorkMultiplier) != "16" {
		t.Fatal("limits not boosted")
	}

	e.tick()
	st, err := c.Status(e.ctx, plan.HintID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Ready() || st.State != hotspot.StatePreparing || st.Files[0].Placed != 3 {
		t.Fatalf("status before placement %+v", st)
	}
	host.PlaceAll()
	e.clk.add(5 * time.Second)
	e.tick()
	st, err = c.Status(e.ctx, plan.HintID)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Ready() || st.State != hotspot.StateReady || st.Files[0].Placed != 12 {
		t.Fatalf("status after placement %+v", st)
	}
	if host.Conf(hotspot.KeyMaxStreams) != "2" || host.Conf(hotspot.KeyMaxStreamsHard) != "4" || host.Conf(hotspot.KeyWorkMultiplier) != "2" {
		t.Fatal("limits not restored once ready")
	}
	if ws, err := c.WaitReady(e.ctx, plan.HintID, time.Millisecond); err != nil || !ws.Ready() {
		t.Fatalf("WaitReady %v", err)
	}

	// Extend, then let the window run out.
	if _, err := c.Extend(e.ctx, plan.HintID, time.Minute); err != nil {
		t.Fatal(err)
	}
	e.clk.add(10 * time.Minute)
	e.tick()
	if host.Rep("/ckpt/s1/meta") != 12 {
		t.Fatal("restored before the extended deadline")
	}
	e.clk.add(2 * time.Minute)
	e.tick()
	for _, f := range plan.Files {
		if host.Rep(f.Path) != 3 {
			t.Fatalf("%s not restored: %d", f.Path, host.Rep(f.Path))
		}
		if _, ok := host.XAttr(f.Path, "user.newtricks.hotspot"); ok {
			t.Fatal("marker left")
		}
	}
	if names := host.XAttrNames("/"); len(names) != 0 {
		t.Fatalf("state xattrs left: %v", names)
	}
	st, err = c.Status(e.ctx, plan.HintID)
	if err != nil || st.State != hotspot.StateFinished {
		t.Fatalf("finished status %+v %v", st, err)
	}
	if _, err := c.Extend(e.ctx, plan.HintID, time.Minute); !errors.Is(err, hotspot.ErrFinished) {
		t.Fatalf("extend finished: %v", err)
	}
}

func TestDoneRestoresAtOnce(t *testing.T) {
	host := cluster(6)
	host.SetAutoPlace(true)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	c := e.client("alice")
	plan, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/*"}, For: time.Hour, Readers: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Files) != 3 || plan.Files[0].Target != 4 {
		t.Fatalf("glob plan %+v", plan.Files)
	}
	st, err := c.Cancel(e.ctx, plan.HintID)
	if err != nil || st.State != hotspot.StateCancelled {
		t.Fatalf("cancel: %+v %v", st, err)
	}
	if host.Rep("/ckpt/s1/emb-0") != 3 || host.Conf(hotspot.KeyMaxStreams) != "2" || len(host.XAttrNames("/")) != 0 {
		t.Fatal("cancel did not restore everything")
	}
	if _, err := c.Done(e.ctx, plan.HintID); err != nil {
		t.Fatalf("second done not idempotent: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	cfg := hotspot.DefaultConfig()
	cfg.AllowedPrefixes = []string{"/ckpt", "/data"}
	cfg.MaxFiles = 2
	host := cluster(6)
	e := newEnv(t, cfg, host)
	alice, bob := e.client("alice"), e.client("bob")
	million := make([]string, 100_000) // ~1.5 MB on the wire; a million would exceed gRPC's 4 MB
	for i := range million {
		million[i] = "/ckpt/s1/meta"
	}
	hour := time.Hour
	for _, tc := range []struct {
		name string
		c    *hintclient.Client
		h    hintclient.Hint
		want codes.Code
		is   error
	}{
		{"unknown path", alice, hintclient.Hint{Paths: []string{"/ckpt/nope"}, For: hour, Readers: 4}, codes.NotFound, hotspot.ErrNotFound},
		{"glob matches nothing", alice, hintclient.Hint{Paths: []string{"/ckpt/*/zzz*"}, For: hour, Readers: 4}, codes.NotFound, hotspot.ErrNotFound},
		{"outside prefixes", alice, hintclient.Hint{Paths: []string{"/etc/passwd"}, For: hour, Readers: 4}, codes.PermissionDenied, hotspot.ErrPermission},
		{"no write permission", bob, hintclient.Hint{Paths: []string{"/ckpt/s1/meta"}, For: hour, Readers: 4}, codes.PermissionDenied, hotspot.ErrPermission},
		{"too many paths", alice, hintclient.Hint{Paths: million, For: hour, Readers: 4}, codes.InvalidArgument, hotspot.ErrInvalid},
		{"negative in", alice, hintclient.Hint{Paths: []string{"/ckpt"}, In: -time.Second, For: hour, Readers: 4}, codes.InvalidArgument, hotspot.ErrInvalid},
		{"huge for", alice, hintclient.Hint{Paths: []string{"/ckpt"}, For: 1 << 62, Readers: 4}, codes.InvalidArgument, hotspot.ErrInvalid},
		{"no readers", alice, hintclient.Hint{Paths: []string{"/ckpt"}, For: hour}, codes.InvalidArgument, hotspot.ErrInvalid},
		{"relative path", alice, hintclient.Hint{Paths: []string{"ckpt"}, For: hour, Readers: 1}, codes.InvalidArgument, hotspot.ErrInvalid},
		{"no user", e.client(""), hintclient.Hint{Paths: []string{"/ckpt"}, For: hour, Readers: 1}, codes.InvalidArgument, hotspot.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.Create(e.ctx, tc.h)
			if code(err) != tc.want || !errors.Is(err, tc.is) {
				t.Fatalf("err %v (code %v), want %v", err, code(err), tc.want)
			}
		})
	}
	if n := len(host.XAttrNames("/")); n != 0 || host.Calls("SetReplications") != 0 {
		t.Fatalf("rejected hints left state (%d xattrs, %d setrep)", n, host.Calls("SetReplications"))
	}

	// Partial: one file of bob's, one outside, one missing, and more files than max-files.
	host.Grant("/ckpt/s1/meta", "bob")
	plan, err := bob.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/meta", "/ckpt/s1", "/etc/x", "/ckpt/gone"},
		For: hour, Readers: 100, Replication: 1000})
	if err != nil {
		t.Fatal(err)
	}
	codesSeen := map[string]bool{}
	for _, s := range plan.Skipped {
		codesSeen[s.Code] = true
	}
	for _, want := range []string{hotspot.SkipPermission, hotspot.SkipOutside, hotspot.SkipNotFound, hotspot.SkipTooMany} {
		if !codesSeen[want] {
			t.Errorf("partial plan lacks %s: %+v", want, plan.Skipped)
		}
	}
	if !plan.Partial || len(plan.Files) != 1 || plan.Files[0].Path != "/ckpt/s1/meta" || plan.Files[0].Target != 6 {
		t.Fatalf("partial plan files %+v", plan.Files)
	}
	if !strings.Contains(strings.Join(plan.Notes, ";"), "6 live DataNodes") {
		t.Fatalf("notes %q", plan.Notes)
	}
	// Other users cannot touch the hint; the superuser can.
	if _, err := alice.Status(e.ctx, plan.HintID); code(err) != codes.PermissionDenied {
		t.Fatalf("alice status of bob's hint: %v", err)
	}
	if _, err := alice.Done(e.ctx, plan.HintID); code(err) != codes.PermissionDenied {
		t.Fatalf("alice done of bob's hint: %v", err)
	}
	if _, err := bob.Extend(e.ctx, plan.HintID, 7*time.Hour); code(err) != codes.InvalidArgument {
		t.Fatalf("extend past max duration: %v", err)
	}
	if _, err := bob.Extend(e.ctx, plan.HintID, -time.Second); code(err) != codes.InvalidArgument {
		t.Fatalf("negative extend: %v", err)
	}
	if _, err := e.client("alice").Status(e.ctx, "nope"); code(err) != codes.NotFound {
		t.Fatalf("unknown hint: %v", err)
	}
	if l, err := e.client("hdfs").List(e.ctx); err != nil || len(l) != 1 {
		t.Fatalf("superuser list: %v %v", l, err)
	}
	if _, err := e.client("hdfs").Done(e.ctx, plan.HintID); err != nil {
		t.Fatalf("superuser done: %v", err)
	}
}

func TestQuotaPartialPlan(t *testing.T) {
	host := nnhosttest.NewFakeHost(20)
	// 3 files of 1000 bytes at factor 3 use 9000; quota 20000 leaves 11000: 11 more replicas.
	host.Mkdir("/q", "alice", 20000)
	for _, f := range []string{"/q/a", "/q/b", "/q/c"} {
		host.File(f, "alice", 1000, 3)
	}
	e := newEnv(t, hotspot.DefaultConfig(), host)
	plan, err := e.client("alice").Create(e.ctx, hintclient.Hint{Paths: []string{"/q"}, For: time.Hour, Readers: 20})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, f := range plan.Files {
		got[f.Path] = f.Target
	}
	if got["/q/a"] != 10 || got["/q/b"] != 7 || len(plan.Skipped) != 1 || plan.Skipped[0].Code != hotspot.SkipQuota || !plan.Partial {
		t.Fatalf("quota plan %v skipped %+v", got, plan.Skipped)
	}
	// Every file blocked by quota: RESOURCE_EXHAUSTED.
	host.Mkdir("/full", "alice", 3000)
	host.File("/full/x", "alice", 1000, 3)
	if _, err := e.client("alice").Create(e.ctx, hintclient.Hint{Paths: []string{"/full"}, For: time.Hour, Readers: 20}); code(err) != codes.ResourceExhausted {
		t.Fatalf("full quota: %v", err)
	}
}

func TestLoadShrinksFactor(t *testing.T) {
	host := nnhosttest.NewFakeHost(100)
	host.File("/ckpt/a", "alice", 1000, 3)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	c := e.client("alice")
	quiet, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/a"}, For: time.Hour, Readers: 4096, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	host.SetLoad(64, 0)
	busy, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/a"}, For: time.Hour, Readers: 4096, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if quiet.Files[0].Target != 100 || busy.Files[0].Target != 20 || quiet.HintID != "" || host.Rep("/ckpt/a") != 3 {
		t.Fatalf("quiet %d busy %d (dry run must change nothing)", quiet.Files[0].Target, busy.Files[0].Target)
	}
}

func TestCrashRecovery(t *testing.T) {
	host := cluster(12)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	plan, err := e.client("alice").Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/meta"}, For: time.Minute, Readers: 64})
	if err != nil {
		t.Fatal(err)
	}
	if host.Rep("/ckpt/s1/meta") != 12 || host.Conf(hotspot.KeyMaxStreams) != "32" {
		t.Fatal("not applied")
	}
	// namenode-ext dies with the limits boosted; the new one puts them back at once and
	// adopts the hint.
	e.crash()
	if host.Conf(hotspot.KeyMaxStreams) != "2" || host.Conf(hotspot.KeyMaxStreamsHard) != "4" {
		t.Fatal("limits not restored by recovery")
	}
	st, err := e.client("alice").Status(e.ctx, plan.HintID)
	if err != nil || len(st.Files) != 1 || st.Files[0].Original != 3 {
		t.Fatalf("adopted status %+v %v", st, err)
	}
	e.tick() // still preparing: boosted again
	if host.Conf(hotspot.KeyMaxStreams) != "32" {
		t.Fatal("not boosted again for the adopted preparing hint")
	}
	// Crash again, and come back only after the deadline: the restore is done at once.
	e.crash()
	e.clk.add(2 * time.Minute)
	e.tick()
	if host.Rep("/ckpt/s1/meta") != 3 || len(host.XAttrNames("/")) != 0 || host.Conf(hotspot.KeyMaxStreams) != "2" {
		t.Fatalf("due restore after crash: factor %d state %v", host.Rep("/ckpt/s1/meta"), host.XAttrNames("/"))
	}
}

func TestHostUnavailable(t *testing.T) {
	host := cluster(6)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	c := e.client("alice")
	host.SetSafeMode(true)
	if _, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt"}, For: time.Hour, Readers: 8}); code(err) != codes.Unavailable {
		t.Fatalf("safe mode: %v", err)
	}
	host.SetSafeMode(false)
	host.Fail("SetXAttr", status.Error(codes.Unavailable, "gone"))
	if _, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt"}, For: time.Hour, Readers: 8}); !errors.Is(err, hotspot.ErrUnavailable) {
		t.Fatalf("registry write failure: %v", err)
	}
	if host.Calls("SetReplications") != 0 {
		t.Fatal("factor changed without a durable record")
	}
	host.Fail("SetXAttr", nil)
	plan, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/meta"}, For: time.Minute, Readers: 8})
	if err != nil {
		t.Fatal(err)
	}
	// The host goes away over the deadline: restore is retried until it is back.
	host.SetDown(true)
	e.clk.add(2 * time.Minute)
	e.tick()
	host.SetDown(false)
	if host.Rep("/ckpt/s1/meta") != 4 {
		t.Fatal("restored while down?")
	}
	e.tick()
	if host.Rep("/ckpt/s1/meta") != 3 || len(host.XAttrNames("/")) != 0 {
		t.Fatalf("restore not retried: %d", host.Rep("/ckpt/s1/meta"))
	}
	_ = plan
	// A manager whose host is down at start keeps retrying in Run and never crashes.
	host.SetDown(true)
	m, err := hotspot.New(hotspot.DefaultConfig(), host, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(context.Background(), hotspot.Request{Paths: []string{"/ckpt"}, HotFor: time.Hour, Readers: 1, User: "alice"}); !errors.Is(err, hotspot.ErrRecovering) {
		t.Fatalf("create before recovery: %v", err)
	}
}

func TestOverlapAndExternalChange(t *testing.T) {
	host := cluster(30)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	c := e.client("alice")
	small, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/meta", "/ckpt/s1/emb-0"}, For: time.Minute, Readers: 10})
	if err != nil {
		t.Fatal(err)
	}
	big, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/meta"}, For: time.Hour, Readers: 40})
	if err != nil {
		t.Fatal(err)
	}
	if big.Files[0].Original != 3 || host.Rep("/ckpt/s1/meta") != 20 {
		t.Fatalf("overlap: original %d factor %d", big.Files[0].Original, host.Rep("/ckpt/s1/meta"))
	}
	// A smaller hint on a file held higher: it keeps its own target once the big one ends.
	mid, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/meta"}, For: time.Hour, Readers: 24})
	if err != nil {
		t.Fatal(err)
	}
	if mid.Files[0].Target != 12 || mid.Files[0].Original != 3 || host.Rep("/ckpt/s1/meta") != 20 {
		t.Fatalf("mid hint %+v factor %d", mid.Files[0], host.Rep("/ckpt/s1/meta"))
	}
	// Someone sets emb-0 by hand meanwhile: it is left alone.
	host.SetRep("/ckpt/s1/emb-0", 7)
	if _, err := c.Done(e.ctx, small.HintID); err != nil {
		t.Fatal(err)
	}
	if host.Rep("/ckpt/s1/meta") != 20 || host.Rep("/ckpt/s1/emb-0") != 7 {
		t.Fatalf("after first hint: meta %d emb-0 %d", host.Rep("/ckpt/s1/meta"), host.Rep("/ckpt/s1/emb-0"))
	}
	if _, err := c.Done(e.ctx, big.HintID); err != nil {
		t.Fatal(err)
	}
	if host.Rep("/ckpt/s1/meta") != 12 {
		t.Fatalf("after the big hint: %d, want the mid hint's 12", host.Rep("/ckpt/s1/meta"))
	}
	if _, err := c.Done(e.ctx, mid.HintID); err != nil {
		t.Fatal(err)
	}
	if host.Rep("/ckpt/s1/meta") != 3 {
		t.Fatalf("after both: %d", host.Rep("/ckpt/s1/meta"))
	}
	// A file deleted during the hint does not block the restore.
	h3, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/emb-1"}, For: time.Minute, Readers: 10})
	if err != nil {
		t.Fatal(err)
	}
	host.Delete("/ckpt/s1/emb-1")
	if st, err := c.Done(e.ctx, h3.HintID); err != nil || st.State != hotspot.StateFinished {
		t.Fatalf("deleted file: %+v %v", st, err)
	}
}

func TestTooManyHints(t *testing.T) {
	cfg := hotspot.DefaultConfig()
	cfg.MaxActiveHints = 1
	e := newEnv(t, cfg, cluster(6))
	c := e.client("alice")
	if _, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/meta"}, For: time.Minute, Readers: 8}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/emb-0"}, For: time.Minute, Readers: 8}); code(err) != codes.ResourceExhausted {
		t.Fatalf("second hint: %v", err)
	}
}

func TestReactive(t *testing.T) {
	cfg := hotspot.DefaultConfig()
	cfg.Reactive = true
	cfg.ReactiveClients = 3
	cfg.ReactiveWindow = 10 * time.Second
	cfg.ReactiveDuration = time.Minute
	cfg.ReactiveCooldown = time.Hour
	cfg.ReactiveUser = "hotspot-svc"
	host := cluster(12)
	host.Grant("/ckpt/s1/meta", "hotspot-svc") // emb-0 stays alice's alone
	e := newEnv(t, cfg, host)
	now := e.clk.now()
	open := func(ip string, at time.Duration) {
		e.m.ObserveAudit("open", "/ckpt/s1/meta", "trainer", ip, now.Add(at))
	}
	open("10.0.0.1", 0)
	open("10.0.0.1", time.Second) // same client
	open("10.0.0.2", 20*time.Second)
	e.m.ObserveAudit("getfileinfo", "/ckpt/s1/meta", "trainer", "10.0.0.9", now.Add(20*time.Second))
	open("10.0.0.3", 21*time.Second) // 10.0.0.1 fell out of the window
	if n := hotspot.DrainImplicit(e.m, e.ctx); n != 0 {
		t.Fatalf("fired early (%d)", n)
	}
	open("10.0.0.4", 22*time.Second)
	if n := hotspot.DrainImplicit(e.m, e.ctx); n != 1 {
		t.Fatalf("implicit hints %d, want 1", n)
	}
	if host.Rep("/ckpt/s1/meta") != 6 {
		t.Fatalf("implicit factor %d, want 6 (4K readers / 2 per replica)", host.Rep("/ckpt/s1/meta"))
	}
	list, _ := e.client("hdfs").List(e.ctx)
	if len(list) != 1 || !list[0].Implicit || list[0].User != "hotspot-svc" {
		t.Fatalf("list %+v", list)
	}
	// A file the service user may not write is not raised: the implicit hint is refused as
	// any user's would be (nothing to boost, permission), and the file keeps its factor.
	for i := 0; i < 3; i++ {
		e.m.ObserveAudit("open", "/ckpt/s1/emb-0", "trainer", "10.0.5."+string(rune('0'+i)), now.Add(22*time.Second))
	}
	if n := hotspot.DrainImplicit(e.m, e.ctx); n != 1 {
		t.Fatalf("implicit triggers for emb-0: %d, want 1", n)
	}
	if host.Rep("/ckpt/s1/emb-0") != 3 {
		t.Fatalf("emb-0 raised to %d as a user who may not write it", host.Rep("/ckpt/s1/emb-0"))
	}
	if list, _ := e.client("hdfs").List(e.ctx); len(list) != 1 {
		t.Fatalf("an implicit hint for emb-0 was kept: %+v", list)
	}
	// More opens while held: nothing new. After the window, restore; within cool-down, no refire.
	for i := 0; i < 10; i++ {
		open("10.0.1."+string(rune('0'+i)), 23*time.Second)
	}
	e.clk.add(2 * time.Minute)
	e.tick()
	if host.Rep("/ckpt/s1/meta") != 3 {
		t.Fatal("implicit hint not restored")
	}
	for i := 0; i < 5; i++ {
		e.m.ObserveAudit("open", "/ckpt/s1/meta", "t", "10.0.2."+string(rune('0'+i)), e.clk.now())
	}
	if n := hotspot.DrainImplicit(e.m, e.ctx); n != 0 {
		t.Fatal("fired within cool-down")
	}
	// Off by default.
	e2 := newEnv(t, hotspot.DefaultConfig(), cluster(12))
	for i := 0; i < 20; i++ {
		e2.m.ObserveAudit("open", "/ckpt/s1/meta", "t", "10.0.3."+string(rune('0'+i)), e2.clk.now())
	}
	if n := hotspot.DrainImplicit(e2.m, e2.ctx); n != 0 {
		t.Fatal("reactive fired while off")
	}
}

func TestCollectors(t *testing.T) {
	e := newEnv(t, hotspot.DefaultConfig(), cluster(6))
	if n := len(e.m.Collectors()); n < 8 {
		t.Fatalf("%d collectors", n)
	}
}

func TestRaiseFailureIsTrackedAndReady(t *testing.T) {
	host := cluster(6)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	c := e.client("alice")
	host.Fail("SetReplications", status.Error(codes.ResourceExhausted, "QuotaExceededException: too big"))
	plan, err := c.Create(e.ctx, hintclient.Hint{Paths: []string{"/ckpt/s1/meta"}, For: time.Minute, Readers: 8})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Partial || plan.Files[0].Target != 3 || !strings.Contains(plan.Files[0].Note, "not raised") {
		t.Fatalf("plan %+v", plan.Files)
	}
	host.Fail("SetReplications", nil)
	e.tick()
	st, err := c.Status(e.ctx, plan.HintID)
	if err != nil || !st.Ready() {
		t.Fatalf("status %+v %v", st, err)
	}
	if host.Conf(hotspot.KeyMaxStreams) != "2" {
		t.Fatal("limits boosted for a hint with nothing to copy")
	}
	if _, err := c.Done(e.ctx, plan.HintID); err != nil || host.Rep("/ckpt/s1/meta") != 3 || len(host.XAttrNames("/")) != 0 {
		t.Fatalf("done: %v factor %d", err, host.Rep("/ckpt/s1/meta"))
	}
}

// With no hint preparing, a tick asks the NameNode nothing (no 1 Hz state poll on an idle
// cluster); while one prepares, each tick reads the state again; once it is ready, ticks stop
// asking again.
func TestIdleTickAsksNoState(t *testing.T) {
	host := cluster(12)
	host.SetAutoPlace(false)
	e := newEnv(t, hotspot.DefaultConfig(), host)
	calls := func() int {
		n := 0
		for _, op := range []string{"GetNamesystemState", "InspectFiles", "SetReplication", "SetXAttr", "RemoveXAttr", "Reconfigure", "GetXAttrs"} {
			n += host.Calls(op)
		}
		return n
	}
	before, ns := calls(), host.Calls("GetNamesystemState")
	for i := 0; i < 5; i++ {
		e.tick()
	}
	if got := calls(); got != before {
		t.Fatalf("5 idle ticks made %d host calls", got-before)
	}
	p := e.create("alice", []string{"/ckpt/s1/meta"}, 20, time.Minute)
	ns = host.Calls("GetNamesystemState")
	e.tick()
	e.tick()
	if got := host.Calls("GetNamesystemState") - ns; got != 2 {
		t.Fatalf("2 ticks with a preparing hint read the state %d times, want 2", got)
	}
	host.PlaceAll()
	e.tick()
	if st, _ := e.client("alice").Status(e.ctx, p.HintID); st.State != hotspot.StateReady {
		t.Fatalf("hint %s, want READY", st.State)
	}
	ns = host.Calls("GetNamesystemState")
	e.tick()
	e.tick()
	if got := host.Calls("GetNamesystemState") - ns; got != 0 {
		t.Fatalf("2 ticks with only a ready hint read the state %d times", got)
	}
}
