package mirror

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/internal/fuzzcheck"
	"github.com/newtricks/newtricks/namenode-ext/nnhost"
	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// FuzzMirrorRequests decodes arbitrary bytes as each public Mirror request (Status, Urgent,
// Complete, Wait), as the gRPC edge would, and runs the real handlers over a recovered Engine
// (rule ck: marker, /ckpt/{job}/step_{step}; rule sig: signal, /sig/{job}/step_{step}) on the
// shared fake NameNode (nnhosttest: alice's directories, bob's /ckpt/bobjob and /sig/bobjob,
// the superuser hdfs's /ckpt/root) under each kind of caller. Every answer is a status of a
// code a request may cause (never a panic, a non-status error, INTERNAL or UNKNOWN); only an
// identified caller succeeds, acting as the user ActAs allows; a user sees (Status, Wait) only
// their own checkpoints and marks or completes only where they may write (the superuser
// anywhere); Complete creates nothing for a directory that does not exist; urgent marks,
// checkpoints in flight and Wait streams stay within their bounds, and every Wait stream is
// given back.
//
// Every input starts from the same three checkpoints: alice's ck/j/1, bob's sig/bobjob/1 and
// ck/llama/5, whose owner is not known yet. Wait runs on a context already cancelled: it
// answers what it has, then CANCELLED, at once.
func FuzzMirrorRequests(f *testing.F) {
	fz := newMirrorFuzz(f)
	for _, seed := range mirrorSeeds() {
		b, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { fz.check(t, fz.api, b) })
}

// fuzzT is what the checks need of a *testing.T (a fuzzcheck.Recorder in the Catches test).
type fuzzT = fuzzcheck.T

// fuzzCaller is one kind of caller (fuzzcheck.Callers lists them).
type fuzzCaller = fuzzcheck.Caller

var fuzzCallers = fuzzcheck.Callers

// mirrorSuper is the fake NameNode's superuser: an administrator to the mirror.
const mirrorSuper = "hdfs"

// mirrorFuzz is the fixture: a recovered Engine (no run loop: nothing is copied) on a
// FakeHost, its Mirror edge, and bounds small enough for a fuzzer to cross them.
type mirrorFuzz struct {
	host    *nnhosttest.FakeHost
	e       *Engine
	api     pb.MirrorServer
	callers []fuzzCaller
	// ok counts the calls answered OK, by name: the seeds must reach every success path.
	ok map[string]int
}

func newMirrorFuzz(tb testing.TB) *mirrorFuzz {
	host := aliceHost()
	for _, d := range []struct{ dir, owner string }{
		{"/ckpt", "alice"}, {"/sig", "alice"}, {"/sig/alicejob", "alice"}, {"/sig/alicejob/step_1", "alice"},
		{"/ckpt/bobjob", "bob"}, {"/ckpt/bobjob/step_1", "bob"}, {"/sig/bobjob", "bob"}, {"/sig/bobjob/step_1", "bob"},
		{"/sig/bobjob/step_2", "bob"}, {"/ckpt/root", "hdfs"}, {"/ckpt/root/step_1", "hdfs"}, {"/sig/root/step_1", "hdfs"},
	} {
		host.Mkdir(d.dir, d.owner, -1)
	}
	host.File("/sig/filejob/step_1", "alice", 10, 3) // not a directory
	conf := baseConf()
	conf["newtricks.mirror.rules"] = "ck,sig"
	conf["newtricks.mirror.rule.sig.source"] = "/sig/{job}/step_{step}"
	conf["newtricks.mirror.rule.sig.completion"] = "signal"
	for k, v := range map[string]string{
		"newtricks.mirror.urgent.per-user": "2", "newtricks.mirror.urgent.max-pending": "3",
		"newtricks.mirror.max-checkpoints": "5", "newtricks.mirror.max-checkpoints.per-user": "3",
		"newtricks.mirror.max-waits": "2", "newtricks.mirror.max-waits.per-user": "1",
	} {
		conf[k] = v
	}
	cfg, err := ConfigFromMap(conf)
	if err != nil {
		tb.Fatal(err)
	}
	e, err := New(cfg, host, nil)
	if err != nil {
		tb.Fatal(err)
	}
	e.recovered, e.superuser = true, mirrorSuper
	return &mirrorFuzz{host: host, e: e, api: &server{e: e}, callers: fuzzCallers(), ok: map[string]int{}}
}

// mirrorSeeds are valid requests of every call, and requests at and past each bound.
func mirrorSeeds() []proto.Message {
	ref := func(rule, job string, step int64) *pb.CheckpointRef {
		return &pb.CheckpointRef{Rule: rule, Job: job, Step: step}
	}
	return []proto.Message{
		&pb.MirrorStatusRequest{User: "alice"},
		&pb.MirrorStatusRequest{User: mirrorSuper},
		&pb.MirrorStatusRequest{User: "bob", Rule: "ck", Job: "j"},
		&pb.MirrorUrgentRequest{User: "alice", Ref: ref("ck", "j", 1)},
		&pb.MirrorUrgentRequest{User: "bob", Ref: ref("", "j", 1)},
		&pb.MirrorUrgentRequest{User: "alice", Ref: ref("ck", "newjob", 3)},
		&pb.MirrorUrgentRequest{User: "bob", Ref: ref("ck", "bobjob", 2)},
		&pb.MirrorUrgentRequest{User: mirrorSuper, Ref: ref("sig", "anyjob", 9)},
		&pb.MirrorUrgentRequest{User: "alice", Ref: ref("ck", strings.Repeat("j", 1<<16), 1)},
		&pb.MirrorUrgentRequest{User: "alice", Ref: ref("ck", "..", -1)},
		&pb.MirrorUrgentRequest{User: "alice", Ref: ref(strings.Repeat("r", 100), "j", 1)},
		&pb.MirrorCompleteRequest{User: "alice", Ref: ref("sig", "alicejob", 1)},
		&pb.MirrorCompleteRequest{User: "bob", Ref: ref("sig", "alicejob", 1)},
		&pb.MirrorCompleteRequest{User: "bob", Ref: ref("sig", "bobjob", 2)},
		&pb.MirrorCompleteRequest{User: "alice", Ref: ref("sig", "nojob", 1)},
		&pb.MirrorCompleteRequest{User: "alice", Ref: ref("ck", "j", 1)},
		&pb.MirrorCompleteRequest{User: "alice", Ref: ref("sig", "filejob", 1)},
		&pb.MirrorCompleteRequest{User: mirrorSuper, Ref: ref("sig", "root", 1)},
		&pb.MirrorWaitRequest{User: "alice", Ref: ref("ck", "j", 1), IntervalMs: 1},
		&pb.MirrorWaitRequest{User: "bob", Ref: ref("", "j", 1), IntervalMs: 1 << 62},
		&pb.MirrorWaitRequest{User: mirrorSuper, Ref: ref("ck", "llama", 5), IntervalMs: -1},
		&pb.MirrorWaitRequest{User: "alice", Ref: ref("ck", "llama", 5)},
	}
}

// reset leaves the engine with the fixture's checkpoints only.
func (fz *mirrorFuzz) reset() {
	e := fz.e
	e.mu.Lock()
	defer e.mu.Unlock()
	clear(e.ckpts)
	clear(e.byDir)
	clear(e.urgentSoon)
	e.finished, e.urgentLive = nil, 0
	for _, c := range []struct {
		rule, job string
		step      int64
		owner     string
	}{{"ck", "j", 1, "alice"}, {"sig", "bobjob", 1, "bob"}, {"ck", "llama", 5, ""}} {
		r := e.rule(c.rule)
		k := Key{Rule: c.rule, Job: c.job, Step: c.step}
		ck := e.newCheckpoint(r, k, fmt.Sprint(c.step), expand(r.Source, c.job, fmt.Sprint(c.step)), newID(k))
		ck.owner, ck.resolved = c.owner, c.owner != ""
		e.ckpts[k], e.byDir[ck.srcDir] = ck, ck
	}
}

// snapshot is what the engine tracks: checkpoints (owner by key), pending urgent marks (user
// by key), Wait streams.
type mirrorSnapshot struct {
	ckpts   map[Key]string
	pending map[Key]string
	active  int
	waits   int
}

func (fz *mirrorFuzz) snapshot() mirrorSnapshot {
	e := fz.e
	e.mu.Lock()
	defer e.mu.Unlock()
	s := mirrorSnapshot{ckpts: map[Key]string{}, pending: map[Key]string{}, waits: e.waitsAll}
	for k, c := range e.ckpts {
		s.ckpts[k] = c.owner
		if !c.state.terminal() {
			s.active++
		}
	}
	for k, p := range e.urgentSoon {
		s.pending[k] = p.user
	}
	return s
}

// dirOf is the directory of a checkpoint an answer names.
func (fz *mirrorFuzz) dirOf(st *pb.CheckpointStatus) string {
	if st.GetSourcePath() != "" {
		return st.GetSourcePath()
	}
	r := fz.e.rule(st.GetRef().GetRule())
	if r == nil {
		return ""
	}
	return expand(r.Source, st.GetRef().GetJob(), fmt.Sprint(st.GetRef().GetStep()))
}

// writer returns the owner of dir, or of its nearest existing ancestor when nearest is set:
// the one user of the fixture who may write there.
func (fz *mirrorFuzz) writer(dir string, nearest bool) (owner string, exists bool) {
	for p := dir; ; p = path.Dir(p) {
		st, err := fz.host.GetFileStatus(context.Background(), p, nnhost.AsService)
		if err == nil {
			return st.Owner, p == dir
		}
		if !nearest || p == "/" || p == "." {
			return "", false
		}
	}
}

// check runs one input through every call under every caller.
func (fz *mirrorFuzz) check(t fuzzT, api pb.MirrorServer, b []byte) {
	t.Helper()
	fz.reset()
	for _, c := range fz.callers {
		var st pb.MirrorStatusRequest
		if proto.Unmarshal(b, &st) == nil {
			resp, err := api.Status(c.Ctx, &st)
			fz.wantStatus(t, "Status", c, &st, err)
			user, _ := c.ActAs(st.GetUser())
			for _, cs := range resp.GetCheckpoints() {
				if user != mirrorSuper && cs.GetOwner() != user {
					t.Fatalf("Status for %s (caller %q) shows %s, whose owner is %q", user, c.Name, cs.GetSourcePath(), cs.GetOwner())
				}
			}
		}
		var urg pb.MirrorUrgentRequest
		if proto.Unmarshal(b, &urg) == nil {
			fz.checkMark(t, "Urgent", c, &urg, urg.GetUser(), urg.GetRef(), func() (*pb.CheckpointStatus, error) { return api.Urgent(c.Ctx, &urg) })
		}
		var done pb.MirrorCompleteRequest
		if proto.Unmarshal(b, &done) == nil {
			fz.checkMark(t, "Complete", c, &done, done.GetUser(), done.GetRef(), func() (*pb.CheckpointStatus, error) { return api.Complete(c.Ctx, &done) })
		}
		var wait pb.MirrorWaitRequest
		if proto.Unmarshal(b, &wait) == nil {
			fz.checkWait(t, api, c, &wait)
		}
	}
	s := fz.snapshot()
	switch {
	case s.waits != 0:
		t.Fatalf("%d Wait streams not given back", s.waits)
	case len(s.pending) > fz.e.cfg.UrgentMaxPending || s.active > fz.e.cfg.MaxCheckpoints:
		t.Fatalf("%d urgent marks pending (max-pending %d), %d checkpoints active (max-checkpoints %d)",
			len(s.pending), fz.e.cfg.UrgentMaxPending, s.active, fz.e.cfg.MaxCheckpoints)
	}
	per := map[string]int{}
	for _, u := range s.pending {
		if per[u]++; u != mirrorSuper && per[u] > fz.e.cfg.UrgentPerUser {
			t.Fatalf("%s has %d urgent marks pending (per-user %d)", u, per[u], fz.e.cfg.UrgentPerUser)
		}
	}
}

// checkMark checks Urgent or Complete: a success only on a valid key where the acting user
// may write (anywhere for the superuser), for Complete only on an existing directory of a
// signal rule; a refusal leaves no checkpoint or mark behind.
func (fz *mirrorFuzz) checkMark(t fuzzT, call string, c fuzzCaller, req proto.Message, requested string, ref *pb.CheckpointRef,
	do func() (*pb.CheckpointStatus, error)) {
	t.Helper()
	before := fz.snapshot()
	st, err := do()
	fz.wantStatus(t, call, c, req, err)
	after := fz.snapshot()
	if err != nil {
		if len(after.ckpts) != len(before.ckpts) || len(after.pending) != len(before.pending) {
			t.Fatalf("a refused %s (%v) left %d checkpoints, %d urgent marks (were %d, %d)",
				call, err, len(after.ckpts), len(after.pending), len(before.ckpts), len(before.pending))
		}
		return
	}
	user, _ := c.ActAs(requested)
	k := Key{Rule: st.GetRef().GetRule(), Job: st.GetRef().GetJob(), Step: st.GetRef().GetStep()}
	if checkKey(Key{Rule: ref.GetRule(), Job: ref.GetJob(), Step: ref.GetStep()}) != nil || k.Job != ref.GetJob() || k.Step != ref.GetStep() {
		t.Fatalf("%s of %v answered for %v", call, ref, st.GetRef())
	}
	dir := fz.dirOf(st)
	r := fz.e.rule(k.Rule)
	if dir == "" || r == nil {
		t.Fatalf("%s answered %v: no rule or directory", call, st)
	}
	switch call {
	case "Urgent":
		if !st.GetUrgent() {
			t.Fatalf("Urgent answered a checkpoint that is not urgent: %v", st)
		}
		if p, ok := after.pending[k]; ok && p != user {
			t.Fatalf("%s's urgent mark on %v is held as %s's", user, k, p)
		}
	case "Complete":
		fi, err := fz.host.GetFileStatus(context.Background(), dir, nnhost.AsService)
		if err != nil || !fi.IsDir || r.Completion != CompleteSignal {
			t.Fatalf("Complete accepted %s (rule %s completes by %s): %v", dir, r.Name, r.Completion, err)
		}
	}
	if user == mirrorSuper {
		return
	}
	// Only the owner of the directory (for a checkpoint not seen yet, of its nearest
	// existing ancestor) may write there: the fixture grants nobody else.
	if owner, _ := fz.writer(dir, call == "Urgent" && st.GetSourcePath() == ""); owner != user {
		t.Fatalf("%s by %s (caller %q) on %s, which only %q may write", call, user, c.Name, dir, owner)
	}
}

func (fz *mirrorFuzz) checkWait(t fuzzT, api pb.MirrorServer, c fuzzCaller, req *pb.MirrorWaitRequest) {
	t.Helper()
	ctx, cancel := context.WithCancel(c.Ctx)
	cancel()
	st := &sendStream[pb.CheckpointStatus]{ctx: ctx}
	err := api.Wait(req, st)
	if status.Code(err) == codes.Canceled {
		err = nil // what Wait ends with when its caller goes away: counted as a success here
	}
	fz.wantStatus(t, "Wait", c, req, err)
	user, _ := c.ActAs(req.GetUser())
	for _, cs := range st.sent {
		if user != mirrorSuper && cs.GetOwner() != user {
			t.Fatalf("Wait for %s (caller %q) sent %s, whose owner is %q", user, c.Name, cs.GetSourcePath(), cs.GetOwner())
		}
	}
	if len(st.sent) > 0 {
		fz.ok["Wait sent"]++
	}
}

// wantStatus fails unless err is nil or a gRPC status error of a code a request may cause
// (never UNKNOWN: not a status, or INTERNAL: an error no table maps), and on a success for
// a caller without an identity.
func (fz *mirrorFuzz) wantStatus(t fuzzT, call string, c fuzzCaller, req proto.Message, err error) {
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

// sendStream is the server side of a server-streaming call: it keeps what is sent.
type sendStream[T any] struct {
	grpc.ServerStream
	ctx  context.Context
	sent []*T
}

func (s *sendStream[T]) Context() context.Context { return s.ctx }
func (s *sendStream[T]) Send(m *T) error {
	s.sent = append(s.sent, m)
	return nil
}

// brokenMirror is the Mirror edge with one handler broken as a careless change could break it.
type brokenMirror struct {
	*server
	status   func(s *server, ctx context.Context, req *pb.MirrorStatusRequest) (*pb.MirrorStatusResponse, error)
	urgent   func(s *server, ctx context.Context, req *pb.MirrorUrgentRequest) (*pb.CheckpointStatus, error)
	complete func(s *server, ctx context.Context, req *pb.MirrorCompleteRequest) (*pb.CheckpointStatus, error)
	wait     func(s *server, req *pb.MirrorWaitRequest, stream pb.Mirror_WaitServer) error
}

func (b brokenMirror) Status(ctx context.Context, req *pb.MirrorStatusRequest) (*pb.MirrorStatusResponse, error) {
	if b.status != nil {
		return b.status(b.server, ctx, req)
	}
	return b.server.Status(ctx, req)
}

func (b brokenMirror) Urgent(ctx context.Context, req *pb.MirrorUrgentRequest) (*pb.CheckpointStatus, error) {
	if b.urgent != nil {
		return b.urgent(b.server, ctx, req)
	}
	return b.server.Urgent(ctx, req)
}

func (b brokenMirror) Complete(ctx context.Context, req *pb.MirrorCompleteRequest) (*pb.CheckpointStatus, error) {
	if b.complete != nil {
		return b.complete(b.server, ctx, req)
	}
	return b.server.Complete(ctx, req)
}

func (b brokenMirror) Wait(req *pb.MirrorWaitRequest, stream pb.Mirror_WaitServer) error {
	if b.wait != nil {
		return b.wait(b.server, req, stream)
	}
	return b.server.Wait(req, stream)
}

// TestFuzzMirrorCatches: the fuzz target's checks fail on handlers broken in the ways they
// look for, and pass on the real one, with the seeds as inputs (which must reach every
// call's success path).
func TestFuzzMirrorCatches(t *testing.T) {
	var seeds [][]byte
	for _, s := range mirrorSeeds() {
		b, _ := proto.Marshal(s)
		seeds = append(seeds, b)
	}
	for _, tc := range []struct {
		name string
		api  func(s *server) pb.MirrorServer
		want string // in the first failure; "" for none
	}{
		{"the real server", func(s *server) pb.MirrorServer { return s }, ""},
		{"an error without a status", func(s *server) pb.MirrorServer {
			return brokenMirror{server: s, urgent: func(s *server, ctx context.Context, req *pb.MirrorUrgentRequest) (*pb.CheckpointStatus, error) {
				return nil, errors.New("urgent: something went wrong")
			}}
		}, "error without a status"},
		{"everyone an administrator in Status", func(s *server) pb.MirrorServer {
			return brokenMirror{server: s, status: func(s *server, ctx context.Context, req *pb.MirrorStatusRequest) (*pb.MirrorStatusResponse, error) {
				user, err := authn.ActAs(ctx, req.GetUser())
				if err != nil {
					return nil, coproc.ToStatus(err)
				}
				return s.e.status(user, true, req.GetRule(), req.GetJob()), nil
			}}
		}, "whose owner is"},
		{"Complete without the write check", func(s *server) pb.MirrorServer {
			return brokenMirror{server: s, complete: func(s *server, ctx context.Context, req *pb.MirrorCompleteRequest) (*pb.CheckpointStatus, error) {
				user, err := authn.ActAs(ctx, req.GetUser())
				if err != nil {
					return nil, coproc.ToStatus(err)
				}
				st, err := s.e.Complete(ctx, refOf(req.GetRef()), user, true)
				return st, s.e.toStatus(err)
			}}
		}, "which only"},
		{"a Wait stream not given back", func(s *server) pb.MirrorServer {
			return brokenMirror{server: s, wait: func(s *server, req *pb.MirrorWaitRequest, stream pb.Mirror_WaitServer) error {
				user, err := authn.ActAs(stream.Context(), req.GetUser())
				if err != nil {
					return coproc.ToStatus(err)
				}
				if _, err := s.e.enterWait(user); err != nil {
					return s.e.toStatus(err)
				}
				return status.Error(codes.Canceled, "gone")
			}}
		}, "not given back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fz := newMirrorFuzz(t)
			api := tc.api(fz.api.(*server))
			var failures []string
			for _, b := range seeds {
				r := &fuzzcheck.Recorder{}
				if f := r.Run(func() { fz.check(r, api, b) }); f != "" {
					failures = append(failures, f)
				}
			}
			if tc.want == "" {
				for _, call := range []string{"Status", "Urgent", "Complete", "Wait", "Wait sent"} {
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
