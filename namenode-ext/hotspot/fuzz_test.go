package hotspot

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/fuzzcheck"
	"github.com/newtricks/newtricks/namenode-ext/nnhost"
	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
	nnv1 "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// FuzzHintRequests decodes arbitrary bytes as each public Hints request (Create, Status,
// Extend, Done, List), as the gRPC edge would, and runs the real handlers over a Manager on
// the shared fake NameNode (nnhosttest: alice's files under /ckpt, bob's under /data/bob, 12
// live DataNodes) under each kind of caller. Every answer is a status of a code a request may
// cause (never a panic, a non-status error, INTERNAL or UNKNOWN); only an identified caller
// succeeds, acting as the user ActAs allows; a hint raises only files its user may write,
// never above the live DataNodes, within max-paths, max-files, the lead and duration limits;
// a dry run changes nothing; a hint is seen, extended or ended only by its user or the
// superuser (hdfs); List shows a user only their hints. After every input each hint is
// cancelled and every factor must be back where it was.
//
// A request whose hint_id is fuzzHint names alice's hint of the fixture on /ckpt/s1/meta
// (created anew for every input), so that Status, Extend and Done reach a real hint.
func FuzzHintRequests(f *testing.F) {
	fz := newHintFuzz(f)
	for _, seed := range hintSeeds() {
		b, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { fz.check(t, fz.api, b) })
}

// fuzzHint in a request's hint_id stands for the fixture's hint.
const fuzzHint = "fixture"

// fuzzT is what the checks need of a *testing.T (a fuzzcheck.Recorder in the Catches test).
type fuzzT = fuzzcheck.T

// fuzzCaller is one kind of caller (fuzzcheck.Callers lists them).
type fuzzCaller = fuzzcheck.Caller

var fuzzCallers = fuzzcheck.Callers

// hintFiles are the fixture's files, by owner; each has factor 3.
var hintFiles = map[string][]string{
	"alice": {"/ckpt/s1/meta", "/ckpt/s1/emb-0", "/ckpt/s1/emb-1", "/ckpt/s2/a", "/ckpt/s2/b"},
	"bob":   {"/data/bob/x", "/data/bob/y"},
}

const (
	hintLive     = 12 // live DataNodes of the fixture
	hintOriginal = 3  // every file's factor before any hint
)

// hintFuzz is the fixture: a recovered Manager (no background loop) on a FakeHost, its
// Hints edge, and bounds small enough for a fuzzer to cross them.
type hintFuzz struct {
	host    *nnhosttest.FakeHost
	cfg     Config
	m       *Manager
	api     nnv1.HintsServer
	callers []fuzzCaller
	fixture string // alice's hint, created by check
	// ok counts the calls answered OK, by name: the seeds must reach every success path.
	ok map[string]int
}

func newHintFuzz(tb testing.TB) *hintFuzz {
	host := nnhosttest.NewFakeHost(hintLive)
	host.Mkdir("/ckpt", "alice", -1)
	for owner, files := range hintFiles {
		for _, p := range files {
			host.File(p, owner, 1000, hintOriginal)
		}
	}
	cfg := DefaultConfig()
	cfg.MaxPaths, cfg.MaxFiles = 4, 4
	m, err := New(cfg, host, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if err := m.recover(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return &hintFuzz{host: host, cfg: cfg, m: m, api: &server{m: m}, callers: fuzzCallers(), ok: map[string]int{}}
}

// hintSeeds are valid requests of every call, and requests at and past each bound.
func hintSeeds() []proto.Message {
	hour := time.Hour.Milliseconds()
	return []proto.Message{
		&nnv1.CreateHintRequest{Paths: []string{"/ckpt/s1"}, HotForMs: hour, Readers: 32, User: "alice"},
		&nnv1.CreateHintRequest{Paths: []string{"/ckpt/s1/emb-*"}, HotInMs: 1000, HotForMs: hour, Readers: 8, DryRun: true},
		&nnv1.CreateHintRequest{Paths: []string{"/data/bob/x", "/ckpt/s2/a"}, HotForMs: hour, Readers: 8, User: "bob"},
		&nnv1.CreateHintRequest{Paths: []string{"/ckpt", "/data"}, HotForMs: hour, Readers: 8, User: "alice", Replication: 32767},
		&nnv1.CreateHintRequest{Paths: []string{"/.reserved/.inodes/16390", "/ckpt/../data/bob/y"}, HotForMs: hour, Readers: 1},
		&nnv1.CreateHintRequest{Paths: []string{"/a", "/b", "/c", "/d", "/e"}, HotForMs: hour, Readers: 8, User: "alice"},
		&nnv1.CreateHintRequest{Paths: []string{"/ckpt/s1"}, HotInMs: 1 << 62, HotForMs: 1<<63 - 1, Readers: 1 << 30, User: "alice"},
		&nnv1.CreateHintRequest{Paths: []string{"/ckpt/s1/[", "relative"}, HotForMs: -1, Readers: -1, Replication: 1 << 30},
		&nnv1.HintStatusRequest{HintId: fuzzHint, User: "alice"},
		&nnv1.HintStatusRequest{HintId: fuzzHint, User: "hdfs"},
		&nnv1.HintStatusRequest{HintId: "h0000000000000000"},
		&nnv1.ExtendHintRequest{HintId: fuzzHint, User: "alice", ExtendByMs: 60000},
		&nnv1.ExtendHintRequest{HintId: fuzzHint, ExtendByMs: 1<<63 - 1},
		&nnv1.DoneHintRequest{HintId: fuzzHint, User: "alice", Cancel: true},
		&nnv1.DoneHintRequest{HintId: fuzzHint, User: "bob"},
		&nnv1.ListHintsRequest{User: "alice"},
		&nnv1.ListHintsRequest{User: "hdfs"},
	}
}

// hintID resolves fuzzHint.
func (fz *hintFuzz) hintID(id string) string {
	if id == fuzzHint {
		return fz.fixture
	}
	return id
}

// hintUser returns the user of an active hint ("" if there is none).
func (fz *hintFuzz) hintUser(id string) string {
	fz.m.mu.Lock()
	defer fz.m.mu.Unlock()
	if h := fz.m.hints[id]; h != nil {
		return h.rec.User
	}
	return ""
}

func (fz *hintFuzz) activeHints() map[string]string {
	fz.m.mu.Lock()
	defer fz.m.mu.Unlock()
	out := map[string]string{}
	for id, h := range fz.m.hints {
		out[id] = h.rec.User
	}
	return out
}

// factors returns every fixture file's factor.
func (fz *hintFuzz) factors(t fuzzT) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, files := range hintFiles {
		for _, p := range files {
			st, err := fz.host.GetFileStatus(context.Background(), p, nnhost.AsService)
			if err != nil {
				t.Fatalf("stat %s: %v", p, err)
			}
			out[p] = st.Replication
		}
	}
	return out
}

// owner returns the owner of a path as the NameNode resolves it (inode paths too).
func (fz *hintFuzz) owner(t fuzzT, p string) string {
	t.Helper()
	st, err := fz.host.GetFileStatus(context.Background(), p, nnhost.AsService)
	if err != nil {
		t.Fatalf("a planned file cannot be found: %s: %v", p, err)
	}
	return st.Owner
}

// check runs one input through every call under every caller, from alice's fixture hint
// alone, and ends every hint after it.
func (fz *hintFuzz) check(t fuzzT, api nnv1.HintsServer, b []byte) {
	t.Helper()
	plan, err := fz.m.Create(context.Background(), Request{Paths: []string{"/ckpt/s1/meta"}, HotFor: time.Hour, Readers: 8, User: "alice"})
	if err != nil {
		t.Fatalf("fixture hint: %v", err)
	}
	fz.fixture = plan.HintID
	for _, c := range fz.callers {
		var create nnv1.CreateHintRequest
		if proto.Unmarshal(b, &create) == nil {
			fz.checkCreate(t, api, c, &create)
		}
		var st nnv1.HintStatusRequest
		if proto.Unmarshal(b, &st) == nil {
			named := st.HintId
			st.HintId = fz.hintID(named)
			resp, err := api.Status(c.Ctx, &st)
			fz.wantStatus(t, "Status", c, &st, err)
			fz.wantHintAccess(t, "Status", c, st.User, named, resp, err)
		}
		var ext nnv1.ExtendHintRequest
		if proto.Unmarshal(b, &ext) == nil {
			named := ext.HintId
			ext.HintId = fz.hintID(named)
			resp, err := api.Extend(c.Ctx, &ext)
			fz.wantStatus(t, "Extend", c, &ext, err)
			fz.wantHintAccess(t, "Extend", c, ext.User, named, resp, err)
			if err == nil && time.Until(time.UnixMilli(resp.DeadlineMs)) > fz.cfg.MaxDuration {
				t.Fatalf("Extend by %d ms: the window ends %v from now, beyond max-duration %v",
					ext.ExtendByMs, time.Until(time.UnixMilli(resp.DeadlineMs)), fz.cfg.MaxDuration)
			}
		}
		var list nnv1.ListHintsRequest
		if proto.Unmarshal(b, &list) == nil {
			resp, err := api.List(c.Ctx, &list)
			fz.wantStatus(t, "List", c, &list, err)
			if user, _ := c.ActAs(list.User); err == nil && user != "hdfs" {
				for _, h := range resp.Hints {
					if h.User != user {
						t.Fatalf("List for %s (caller %q) shows %s's hint %s", user, c.Name, h.User, h.HintId)
					}
				}
				if len(resp.Problems) > 0 {
					t.Fatalf("List for %s shows the superuser's problems %q", user, resp.Problems)
				}
			}
		}
		// Done last: it may end the fixture's hint.
		var done nnv1.DoneHintRequest
		if proto.Unmarshal(b, &done) == nil {
			named := done.HintId
			done.HintId = fz.hintID(named)
			resp, err := api.Done(c.Ctx, &done)
			fz.wantStatus(t, "Done", c, &done, err)
			fz.wantHintAccess(t, "Done", c, done.User, named, resp, err)
			if err == nil && fz.hintUser(done.HintId) != "" {
				t.Fatalf("Done answered %s and the hint is still active", resp.State)
			}
		}
	}
	// End every hint: every factor goes back to the original.
	for id, user := range fz.activeHints() {
		if _, err := fz.m.Done(context.Background(), id, user, true); err != nil {
			t.Fatalf("cancelling %s's hint %s: %v", user, id, err)
		}
	}
	if left := fz.activeHints(); len(left) > 0 {
		t.Fatalf("hints still active after they were all cancelled: %v", left)
	}
	for p, r := range fz.factors(t) {
		if r != hintOriginal {
			t.Fatalf("%s has factor %d after every hint ended, want %d", p, r, hintOriginal)
		}
	}
}

func (fz *hintFuzz) checkCreate(t fuzzT, api nnv1.HintsServer, c fuzzCaller, req *nnv1.CreateHintRequest) {
	t.Helper()
	before, factors := fz.activeHints(), fz.factors(t)
	now := time.Now()
	plan, err := api.Create(c.Ctx, req)
	fz.wantStatus(t, "Create", c, req, err)
	if err != nil {
		if len(fz.activeHints()) != len(before) {
			t.Fatalf("a refused Create (%v) left a hint", err)
		}
		return
	}
	user, ok := c.ActAs(req.User)
	if !ok {
		t.Fatalf("Create succeeded for caller %q with %v", c.Name, req)
	}
	// Within the bounds, whatever was asked.
	switch {
	case len(req.Paths) > fz.cfg.MaxPaths:
		t.Fatalf("Create accepted %d paths (max-paths %d)", len(req.Paths), fz.cfg.MaxPaths)
	case len(plan.Files) > fz.cfg.MaxFiles || len(plan.Skipped) > maxSkippedListed:
		t.Fatalf("a plan of %d files and %d skipped entries (max-files %d)", len(plan.Files), len(plan.Skipped), fz.cfg.MaxFiles)
	case time.UnixMilli(plan.HotFromMs).Sub(now) > fz.cfg.MaxLead+time.Minute:
		t.Fatalf("a hint hot from %v on (max-lead %v)", time.UnixMilli(plan.HotFromMs).Sub(now), fz.cfg.MaxLead)
	case plan.DeadlineMs-plan.HotFromMs > fz.cfg.MaxDuration.Milliseconds() || plan.DeadlineMs <= plan.HotFromMs:
		t.Fatalf("a hot window of %d ms (max-duration %v)", plan.DeadlineMs-plan.HotFromMs, fz.cfg.MaxDuration)
	}
	for _, f := range plan.Files {
		if o := fz.owner(t, f.Path); o != user {
			t.Fatalf("%s's hint (caller %q) plans %s, which is %s's", user, c.Name, f.Path, o)
		}
		if f.TargetReplication > max(f.OriginalReplication, hintLive) {
			t.Fatalf("%s planned at factor %d (was %d) on %d live DataNodes", f.Path, f.TargetReplication, f.OriginalReplication, hintLive)
		}
	}
	now2 := fz.factors(t)
	for p, r := range now2 {
		if r > hintLive && r > factors[p] {
			t.Fatalf("%s raised to %d on %d live DataNodes", p, r, hintLive)
		}
	}
	if req.DryRun {
		if plan.HintId != "" || len(fz.activeHints()) != len(before) {
			t.Fatalf("a dry run made hint %q", plan.HintId)
		}
		for p, r := range now2 {
			if r != factors[p] {
				t.Fatalf("a dry run changed %s's factor from %d to %d", p, factors[p], r)
			}
		}
		return
	}
	if got := fz.hintUser(plan.HintId); got != user {
		t.Fatalf("Create answered hint %q: the manager holds it as %q's, want %s's", plan.HintId, got, user)
	}
	// End it at once, as its user: the caps stay out of the way of the next callers.
	if _, err := api.Done(c.Ctx, &nnv1.DoneHintRequest{HintId: plan.HintId, User: req.User, Cancel: true}); err != nil {
		t.Fatalf("%s cannot cancel the hint it made: %v", user, err)
	}
}

// wantHintAccess fails when a call on a hint succeeded for anyone but the fixture hint's
// user (alice) or the superuser, or on another hint (none of them can be named).
func (fz *hintFuzz) wantHintAccess(t fuzzT, call string, c fuzzCaller, requested, named string, resp *nnv1.HintStatus, err error) {
	t.Helper()
	if err != nil {
		return
	}
	user, _ := c.ActAs(requested)
	if named != fuzzHint || (user != "alice" && user != "hdfs") {
		t.Fatalf("%s of hint %q succeeded for caller %q acting as %q", call, named, c.Name, user)
	}
	if resp.HintId != fz.fixture || resp.User != "alice" {
		t.Fatalf("%s of the fixture answered hint %s of %s", call, resp.HintId, resp.User)
	}
}

// wantStatus fails unless err is nil or a gRPC status error of a code a request may cause
// (never UNKNOWN: not a status, or INTERNAL: an error no table maps), and on a success for
// a caller without an identity.
func (fz *hintFuzz) wantStatus(t fuzzT, call string, c fuzzCaller, req proto.Message, err error) {
	t.Helper()
	s, ok := status.FromError(err)
	if !ok {
		t.Fatalf("%s(%v) from caller %q: error without a status: %v", call, req, c.Name, err)
	}
	if code := s.Code(); code == codes.Unknown || code == codes.Internal {
		t.Fatalf("%s(%v) from caller %q: %v", call, req, c.Name, err)
	}
	if err == nil {
		if !c.Identified {
			t.Fatalf("%s(%v) succeeded for caller %q, who has no identity", call, req, c.Name)
		}
		fz.ok[call]++
	}
}

// brokenHints is the Hints edge with one handler broken as a careless change could break it.
type brokenHints struct {
	*server
	create func(s *server, ctx context.Context, req *nnv1.CreateHintRequest) (*nnv1.HintPlan, error)
	status func(s *server, ctx context.Context, req *nnv1.HintStatusRequest) (*nnv1.HintStatus, error)
}

func (b brokenHints) Create(ctx context.Context, req *nnv1.CreateHintRequest) (*nnv1.HintPlan, error) {
	if b.create != nil {
		return b.create(b.server, ctx, req)
	}
	return b.server.Create(ctx, req)
}

func (b brokenHints) Status(ctx context.Context, req *nnv1.HintStatusRequest) (*nnv1.HintStatus, error) {
	if b.status != nil {
		return b.status(b.server, ctx, req)
	}
	return b.server.Status(ctx, req)
}

// TestFuzzHintsCatches: the fuzz target's checks fail on handlers broken in the ways they
// look for, and pass on the real one, with the seeds as inputs (which must reach every
// call's success path).
func TestFuzzHintsCatches(t *testing.T) {
	var seeds [][]byte
	for _, s := range hintSeeds() {
		b, _ := proto.Marshal(s)
		seeds = append(seeds, b)
	}
	for _, tc := range []struct {
		name string
		api  func(s *server) nnv1.HintsServer
		want string // in the first failure; "" for none
	}{
		{"the real server", func(s *server) nnv1.HintsServer { return s }, ""},
		{"an error without a status", func(s *server) nnv1.HintsServer {
			return brokenHints{server: s, create: func(s *server, ctx context.Context, req *nnv1.CreateHintRequest) (*nnv1.HintPlan, error) {
				return nil, errors.New("create: something went wrong")
			}}
		}, "error without a status"},
		{"the request's user trusted", func(s *server) nnv1.HintsServer {
			return brokenHints{server: s, create: func(s *server, ctx context.Context, req *nnv1.CreateHintRequest) (*nnv1.HintPlan, error) {
				plan, err := s.m.Create(ctx, requestFromProto(req))
				if err != nil {
					return nil, ToStatus(err)
				}
				return planToProto(plan), nil
			}}
		}, "who has no identity"},
		{"status for anyone", func(s *server) nnv1.HintsServer {
			return brokenHints{server: s, status: func(s *server, ctx context.Context, req *nnv1.HintStatusRequest) (*nnv1.HintStatus, error) {
				if _, err := authn.ActAs(ctx, req.User); err != nil {
					return nil, ToStatus(err)
				}
				st, err := s.m.Status(ctx, req.HintId, "hdfs")
				if err != nil {
					return nil, ToStatus(err)
				}
				return StatusToProto(st), nil
			}}
		}, "succeeded for caller"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fz := newHintFuzz(t)
			api := tc.api(fz.api.(*server))
			var failures []string
			for _, b := range seeds {
				r := &fuzzcheck.Recorder{}
				if f := r.Run(func() { fz.check(r, api, b) }); f != "" {
					failures = append(failures, f)
				}
			}
			if tc.want == "" {
				for _, call := range []string{"Create", "Status", "Extend", "Done", "List"} {
					if fz.ok[call] == 0 {
						t.Errorf("no seed reaches a successful %s", call)
					}
				}
			}
			switch {
			case tc.want == "" && len(failures) > 0:
				t.Fatalf("the real server fails the checks: %s", failures[0])
			case tc.want != "" && len(failures) == 0:
				t.Fatalf("no seed caught it")
			case tc.want != "" && !strings.Contains(failures[0], tc.want):
				t.Fatalf("caught as %q, want %q", failures[0], tc.want)
			}
		})
	}
}
