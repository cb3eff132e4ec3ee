package offload

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/fuzzcheck"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/schedule"
)

// FuzzOffloadRequests decodes arbitrary bytes as each public Offload request (OpenSession,
// GetStep, GetStepBatch, CloseSession, ReadRange, NodeStatus, SetGovernor), as the gRPC edge
// would, and runs the real Server over a Manager on the unit tests' world (a dataset in temp
// files, its Namespace and token-checking DataNode fakes) under each kind of caller. Every
// answer is a status of a code a request may cause (never a panic, a recovered panic, a
// non-status error, INTERNAL or UNKNOWN); nobody but the authenticated caller (or the user a
// simple-auth request names) opens, reads or closes a session, and only alice may read the
// dataset; nothing is accepted beyond its documented bound (members.max, lookahead.max,
// step.max, the schedule's limits, a rank's slots, MaxRangeBytes), and no refused call leaves a
// session or a job behind.
//
// A request whose session_id is fuzzSession names alice's session of the fixture (opened
// anew for every input), so that GetStep and CloseSession reach a real session.
func FuzzOffloadRequests(f *testing.F) {
	fz := newOffloadFuzz(f)
	for _, seed := range fz.seeds() {
		b, err := proto.Marshal(seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { fz.check(t, fz.api, b) })
}

// fuzzSession in a request's session_id stands for the fixture's session.
const fuzzSession = "fixture"

// fuzzT is what the checks need of a *testing.T (a fuzzcheck.Recorder in the Catches test).
type fuzzT = fuzzcheck.T

// fuzzCaller is one kind of caller, and who ActAs must make of the user a request names
// (ok false: the call must fail).
type fuzzCaller struct {
	name  string
	ctx   context.Context
	actAs func(requested string) (user string, ok bool)
	// admin: an Impersonator that can answer IsAdmin is on the call; identified: the call
	// carries an identity (simple authentication's counts: the request names the user).
	admin, identified bool
}

func fuzzCallers() []fuzzCaller {
	bg := context.Background()
	proven := func(user string) func(string) (string, bool) {
		return func(r string) (string, bool) { return user, r == "" || r == user }
	}
	return []fuzzCaller{
		{"no interceptor", bg, func(string) (string, bool) { return "", false }, false, false},
		{"simple", authn.NewContext(bg, authn.Identity{Method: authn.MethodSimple}, "10.0.0.1:1", adminImp{}),
			func(r string) (string, bool) { return r, r != "" }, true, true},
		{"kerberos alice", authn.NewContext(bg, authn.Identity{User: "alice", Method: authn.MethodKerberos}, "10.0.0.1:1", nil),
			proven("alice"), false, true},
		{"token carol", authn.NewContext(bg, authn.Identity{User: "carol", Method: authn.MethodToken}, "10.0.0.1:1", nil),
			proven("carol"), false, true},
		{"kerberos without a user", authn.NewContext(bg, authn.Identity{Method: authn.MethodKerberos}, "10.0.0.1:1", adminImp{}),
			func(string) (string, bool) { return "", false }, false, false},
	}
}

// offloadFuzz is the fixture: one node (dn-a) of the world, its Manager (no workers run: a
// step's jobs stay queued, GetStep answers raw after max.wait.ms) and its Server.
type offloadFuzz struct {
	w       *world
	cfg     Config
	mgr     *Manager
	gov     *governor.Governor
	api     pb.OffloadServer
	callers []fuzzCaller
	fixture string // alice's session, opened by reset
	// ok counts the calls answered OK, by name: the seeds must reach every success path.
	ok map[string]int
}

func newOffloadFuzz(tb testing.TB) *offloadFuzz {
	w := newWorld(tb, 8, "")
	// The world fails its test when a file it wrote cannot be read; inside a fuzz target that
	// must not be the F: it panics instead (the node recovers, the check fails as INTERNAL).
	w.t = panicTB{tb}
	gov, err := governor.New(governor.Config{High: 0.5, Low: 0.4}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	// A short max.wait.ms: nothing transforms here, and a step is answered raw at once; a low
	// step.max: the first step of a session costs time in proportion to its number.
	cfg := Config{MaxWait: time.Millisecond, MaxSessionsPerUser: 4, MaxSessions: 8, MaxStep: 1 << 16}
	mgr, err := NewManager(cfg, Options{Host: &fakeHost{w: w, uuid: "dn-a"}, Peers: &worldPeers{w: w}, Gov: gov,
		Namespace: &worldNS{w: w}, Directory: w.directory(), Self: func() string { return "dn-a" }})
	if err != nil {
		tb.Fatal(err)
	}
	return &offloadFuzz{w: w, cfg: mgr.Config(), mgr: mgr, gov: gov, callers: fuzzCallers(), ok: map[string]int{},
		api: &Server{Sessions: mgr, Gov: gov, Version: "fuzz", Self: func() (string, string) { return "dn-a", "x:1" }}}
}

// seeds are valid requests of every call, and requests at and past each bound.
func (fz *offloadFuzz) seeds() []proto.Message {
	w := fz.w
	// The variants leave out the determinism domain (half of a seed's bytes: a session of
	// another domain opens all the same), so that the fuzzer mutates and minimizes less.
	open := func(edit func(r *pb.OpenSessionRequest)) *pb.OpenSessionRequest {
		r := w.openProto()
		r.DeterminismDomain = ""
		edit(r)
		return r
	}
	blk := w.locate(w.ix.FilePath(0), "alice").GetBlocks()[0]
	manySlots := make([]uint32, 1000)
	return []proto.Message{
		w.openProto(),
		open(func(r *pb.OpenSessionRequest) { r.User = "" }),
		open(func(r *pb.OpenSessionRequest) { r.User = "carol" }),
		open(func(r *pb.OpenSessionRequest) { r.Rank, r.StartStep, r.Lookahead = 1, 19, 64 }),
		open(func(r *pb.OpenSessionRequest) { r.RawOnly, r.DeterminismDomain = true, "other" }),
		open(func(r *pb.OpenSessionRequest) { r.Lookahead = 1<<32 - 1 }),
		open(func(r *pb.OpenSessionRequest) { r.Rank = 1 << 31 }),
		open(func(r *pb.OpenSessionRequest) { r.StartStep = 1<<64 - 1 }),
		// An endless schedule (no max_steps) from far steps: refused at step.max (it was computed
		// for ever under the Manager's lock, TestHugeStepRefused), and from one below it.
		open(func(r *pb.OpenSessionRequest) { r.Schedule.MaxSteps, r.StartStep = 0, 1<<64-5 }),
		open(func(r *pb.OpenSessionRequest) { r.Schedule.MaxSteps, r.StartStep = 0, 1<<16 }),
		open(func(r *pb.OpenSessionRequest) { r.Schedule.MaxSteps, r.StartStep = 0, 1<<16-1 }),
		open(func(r *pb.OpenSessionRequest) { r.Schedule.GlobalBatch = 1 << 30 }),
		open(func(r *pb.OpenSessionRequest) { r.Schedule.WorldSize = 1<<32 - 1 }),
		open(func(r *pb.OpenSessionRequest) {
			for i := 0; i < 300; i++ {
				r.Members = append(r.Members, &pb.SessionMember{DatanodeUuid: fmt.Sprintf("dn-%d", i)})
			}
		}),
		open(func(r *pb.OpenSessionRequest) { r.Members = append(r.Members, &pb.SessionMember{DatanodeUuid: "dn-b"}) }),
		open(func(r *pb.OpenSessionRequest) { r.Sources = append(r.Sources, r.Sources[0]) }),
		open(func(r *pb.OpenSessionRequest) { r.Schedule.Sources[0].Dataset = "/data/t/../t" }),
		&pb.GetStepRequest{User: "alice", SessionId: fuzzSession, Slots: []uint32{0, 1}},
		&pb.GetStepRequest{SessionId: fuzzSession, Step: 3, Slots: []uint32{1}, MaxWaitMs: 1<<32 - 1},
		&pb.GetStepRequest{User: "alice", SessionId: fuzzSession, Step: 19, Slots: []uint32{0}},
		&pb.GetStepRequest{User: "alice", SessionId: fuzzSession, Slots: manySlots},
		&pb.GetStepRequest{User: "alice", SessionId: fuzzSession, Step: 1<<64 - 1},
		&pb.CloseSessionRequest{User: "alice", SessionId: fuzzSession},
		&pb.CloseSessionRequest{User: "carol", SessionId: fuzzSession},
		&pb.ReadRangeRequest{User: "alice", Block: blk, Length: 16},
		&pb.ReadRangeRequest{User: "alice", Block: blk, Offset: 500, Length: 12},
		&pb.ReadRangeRequest{User: "alice", Block: blk, Length: 1 << 40},
		&pb.ReadRangeRequest{User: "alice", Block: blk, Offset: 1<<63 - 1, Length: MaxRangeBytes},
		&pb.OffloadNodeStatusRequest{User: "alice"},
		&pb.SetGovernorRequest{User: "hdfs", ThresholdHigh: 0.9, ThresholdLow: 0.5},
		&pb.SetGovernorRequest{User: "alice", ThresholdHigh: 0.9, ThresholdLow: 0.5},
	}
}

// reset leaves the node with alice's fixture session only, opened anew, so that every input
// starts from the same state.
func (fz *offloadFuzz) reset(t fuzzT) {
	t.Helper()
	fz.mgr.mu.Lock()
	for _, s := range fz.mgr.sessions {
		fz.mgr.dropLocked(s)
	}
	fz.mgr.jobs = nil // what a worker's nextLocked would have dropped: every job is canceled
	fz.mgr.mu.Unlock()
	if err := fz.gov.SetThresholds(0.5, 0.4); err != nil {
		t.Fatalf("governor: %v", err)
	}
	res, err := fz.mgr.Open(context.Background(), "alice", fz.w.openRequest())
	if err != nil {
		t.Fatalf("fixture session: %v", err)
	}
	fz.fixture = res.SessionID
}

// sessionID resolves fuzzSession.
func (fz *offloadFuzz) sessionID(id string) string {
	if id == fuzzSession {
		return fz.fixture
	}
	return id
}

// sessionUsers returns the user of every open session, by id.
func (fz *offloadFuzz) sessionUsers() map[string]string {
	fz.mgr.mu.Lock()
	defer fz.mgr.mu.Unlock()
	out := map[string]string{}
	for id, s := range fz.mgr.sessions {
		out[id] = s.user
	}
	return out
}

// jobBound is the most jobs a session of the fixture's schedule may hold: lookahead.max + 1
// steps of a rank's slots.
func (fz *offloadFuzz) jobBound() int {
	return (fz.cfg.MaxLookahead + 1) * fz.w.spec.GlobalBatch
}

// check runs one input through every call under every caller.
func (fz *offloadFuzz) check(t fuzzT, api pb.OffloadServer, b []byte) {
	t.Helper()
	fz.reset(t)
	for _, c := range fz.callers {
		var open pb.OpenSessionRequest
		if proto.Unmarshal(b, &open) == nil {
			fz.checkOpen(t, api, c, &open)
		}
		for _, batch := range []bool{false, true} {
			var step pb.GetStepRequest
			if proto.Unmarshal(b, &step) == nil {
				fz.checkStep(t, api, c, &step, batch)
			}
		}
		var rr pb.ReadRangeRequest
		if proto.Unmarshal(b, &rr) == nil {
			fz.checkReadRange(t, api, c, &rr)
		}
		var ns pb.OffloadNodeStatusRequest
		if proto.Unmarshal(b, &ns) == nil {
			_, err := api.NodeStatus(c.ctx, &ns)
			wantStatus(t, fz.ok, "NodeStatus", c, &ns, err)
			if _, ok := c.actAs(ns.GetUser()); err == nil && !ok {
				t.Fatalf("NodeStatus answered caller %q with %v", c.name, &ns)
			}
		}
		var gov pb.SetGovernorRequest
		if proto.Unmarshal(b, &gov) == nil {
			_, err := api.SetGovernor(c.ctx, &gov)
			wantStatus(t, fz.ok, "SetGovernor", c, &gov, err)
			if u, ok := c.actAs(gov.GetUser()); err == nil && (!ok || !c.admin || u != "hdfs") {
				t.Fatalf("SetGovernor accepted from caller %q (not an administrator) with %v", c.name, &gov)
			}
			if err == nil {
				_ = fz.gov.SetThresholds(0.5, 0.4)
			}
		}
		// CloseSession last: it may end the fixture's session.
		var cl pb.CloseSessionRequest
		if proto.Unmarshal(b, &cl) == nil {
			fz.checkClose(t, api, c, &cl)
		}
	}
	// Every session a call opened was closed again (checkOpen): only the fixture's may be
	// left, unless alice closed it.
	users := fz.sessionUsers()
	delete(users, fz.fixture)
	if len(users) != 0 {
		t.Fatalf("sessions left open: %v", users)
	}
	ctr := fz.mgr.Counters()
	if ctr.Panics != 0 {
		t.Fatalf("%d panics recovered (a request made the node panic)", ctr.Panics)
	}
	if ctr.QueuedJobs > fz.jobBound() {
		t.Fatalf("%d jobs queued for one session, more than %d", ctr.QueuedJobs, fz.jobBound())
	}
}

func (fz *offloadFuzz) checkOpen(t fuzzT, api pb.OffloadServer, c fuzzCaller, req *pb.OpenSessionRequest) {
	t.Helper()
	before := fz.sessionUsers()
	jobs := fz.mgr.Counters().QueuedJobs
	resp, err := api.OpenSession(c.ctx, req)
	wantStatus(t, fz.ok, "OpenSession", c, req, err)
	users := fz.sessionUsers()
	if err != nil {
		if len(users) != len(before) || fz.mgr.Counters().QueuedJobs != jobs {
			t.Fatalf("a refused OpenSession (%v) left a session or jobs: %d sessions, %d jobs (were %d, %d)",
				err, len(users), fz.mgr.Counters().QueuedJobs, len(before), jobs)
		}
		return
	}
	user, ok := c.actAs(req.GetUser())
	if !ok {
		t.Fatalf("caller %q opened a session with %v", c.name, req)
	}
	if user != "alice" {
		t.Fatalf("%s opened a session on alice's dataset (caller %q)", user, c.name)
	}
	id := resp.GetSessionId()
	if got, ok := users[id]; !ok || got != user {
		t.Fatalf("OpenSession answered session %q: the node holds it as %q (%v), want %s's", id, got, ok, user)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) || resp.GetDatanodeUuid() != "dn-a" {
		t.Fatalf("answer %v", resp)
	}
	// What was accepted is inside every documented bound.
	spec, serr := schedule.FromProto(req.GetSchedule())
	switch {
	case serr != nil:
		t.Fatalf("a session opened with a schedule FromProto refuses (%v): %v", serr, req)
	case spec.GlobalBatch > schedule.MaxGlobalBatch || len(spec.Sources) > schedule.MaxSources:
		t.Fatalf("a session opened with %d slots a step and %d sources", spec.GlobalBatch, len(spec.Sources))
	case len(req.GetMembers()) < 1 || len(req.GetMembers()) > fz.cfg.MaxMembers:
		t.Fatalf("a session opened with %d members (members.max %d)", len(req.GetMembers()), fz.cfg.MaxMembers)
	case int(resp.GetLookahead()) > fz.cfg.MaxLookahead || req.GetLookahead() > uint32(fz.cfg.MaxLookahead):
		t.Fatalf("a session opened with lookahead %d (asked %d, lookahead.max %d)", resp.GetLookahead(), req.GetLookahead(), fz.cfg.MaxLookahead)
	case req.GetStartStep() >= fz.cfg.StepLimit(len(spec.Sources)):
		t.Fatalf("a session of %d sources opened at step %d (step.max %d)", len(spec.Sources), req.GetStartStep(), fz.cfg.MaxStep)
	case int(req.GetRank()) >= spec.WorldSize || len(req.GetSources()) != len(spec.Sources):
		t.Fatalf("a session opened with rank %d of %d, %d sources for %d", req.GetRank(), spec.WorldSize, len(req.GetSources()), len(spec.Sources))
	}
	fz.mgr.mu.Lock()
	s := fz.mgr.sessions[id]
	n := 0
	for _, js := range s.steps {
		n += len(js)
	}
	lo, hi := s.lo, s.hi
	fz.mgr.mu.Unlock()
	if n > (s.ahead+1)*(hi-lo) || hi-lo > spec.GlobalBatch {
		t.Fatalf("session of %d steps ahead and slots [%d, %d) holds %d jobs", s.ahead, lo, hi, n)
	}
	// Close it again at once: the caps (sessions.max.per.user) stay out of the way of the next
	// callers, and closing is checked too.
	if _, err := api.CloseSession(c.ctx, &pb.CloseSessionRequest{User: req.GetUser(), SessionId: id}); err != nil {
		t.Fatalf("%s cannot close the session it opened: %v", user, err)
	}
}

func (fz *offloadFuzz) checkStep(t fuzzT, api pb.OffloadServer, c fuzzCaller, req *pb.GetStepRequest, batch bool) {
	t.Helper()
	named := req.GetSessionId()
	req.SessionId = fz.sessionID(named)
	var err error
	var got []*pb.OffloadSample
	name := "GetStep"
	if batch {
		name = "GetStepBatch"
		st := &sendStream[pb.OffloadSampleBatch]{ctx: c.ctx}
		err = api.GetStepBatch(req, st)
		for _, b := range st.sent {
			if len(b.GetSamples()) == 0 {
				t.Fatalf("GetStepBatch sent an empty batch")
			}
			got = append(got, b.GetSamples()...)
		}
	} else {
		st := &sendStream[pb.OffloadSample]{ctx: c.ctx}
		err = api.GetStep(req, st)
		got = st.sent
	}
	wantStatus(t, fz.ok, name, c, req, err)
	if len(got) > 0 {
		fz.ok[name+" samples"]++
	}
	user, ok := c.actAs(req.GetUser())
	if (err == nil || len(got) > 0) && (!ok || user != "alice" || named != fuzzSession) {
		t.Fatalf("%s answered caller %q (acting as %q) %d samples of session %q", name, c.name, user, len(got), named)
	}
	if len(got) > len(req.GetSlots()) {
		t.Fatalf("%s answered %d samples for %d slots", name, len(got), len(req.GetSlots()))
	}
	if err == nil && req.GetStep() >= fz.cfg.MaxStep {
		t.Fatalf("%s answered step %d (step.max %d)", name, req.GetStep(), fz.cfg.MaxStep)
	}
	for _, s := range got {
		if s.GetStep() != req.GetStep() || !slices.Contains(req.GetSlots(), s.GetSlot()) {
			t.Fatalf("%s of step %d, slots %v answered step %d slot %d", name, req.GetStep(), req.GetSlots(), s.GetStep(), s.GetSlot())
		}
		if s.GetError() == "" && len(s.GetFrames()) == 0 {
			t.Fatalf("%s: sample %q without frames or an error", name, s.GetKey())
		}
		if c := codes.Code(s.GetErrorCode()); c == codes.Internal || strings.Contains(s.GetError(), fz.w.repDir) {
			t.Fatalf("%s: sample %q failed with %v: %s", name, s.GetKey(), c, s.GetError())
		}
	}
}

func (fz *offloadFuzz) checkClose(t fuzzT, api pb.OffloadServer, c fuzzCaller, req *pb.CloseSessionRequest) {
	t.Helper()
	named := req.GetSessionId()
	req.SessionId = fz.sessionID(named)
	_, err := api.CloseSession(c.ctx, req)
	wantStatus(t, fz.ok, "CloseSession", c, req, err)
	if err != nil {
		return
	}
	if user, ok := c.actAs(req.GetUser()); !ok || user != "alice" || named != fuzzSession {
		t.Fatalf("CloseSession of %q succeeded for caller %q (acting as %q)", named, c.name, user)
	}
	if _, ok := fz.sessionUsers()[fz.fixture]; ok {
		t.Fatalf("CloseSession succeeded and the session is still open")
	}
}

func (fz *offloadFuzz) checkReadRange(t fuzzT, api pb.OffloadServer, c fuzzCaller, req *pb.ReadRangeRequest) {
	t.Helper()
	resp, err := api.ReadRange(c.ctx, req)
	wantStatus(t, fz.ok, "ReadRange", c, req, err)
	if err != nil {
		if strings.Contains(err.Error(), fz.w.repDir) {
			t.Fatalf("ReadRange's error names a local path: %v", err)
		}
		return
	}
	user, ok := c.actAs(req.GetUser())
	if !ok || string(req.GetBlock().GetToken().GetIdentifier()) != "user="+user {
		t.Fatalf("ReadRange read for caller %q (acting as %q) with token %q", c.name, user, req.GetBlock().GetToken().GetIdentifier())
	}
	n := int64(len(resp.GetData()))
	if n != req.GetLength() || n > MaxRangeBytes || req.GetOffset() < 0 || req.GetOffset()+n > req.GetBlock().GetNumBytes() {
		t.Fatalf("ReadRange [%d, +%d) of a block of %d bytes answered %d bytes", req.GetOffset(), req.GetLength(), req.GetBlock().GetNumBytes(), n)
	}
}

// wantStatus fails unless err is nil or a gRPC status error of a code a request may cause:
// never UNKNOWN (not a status) or INTERNAL (a recovered panic, or an error no table maps).
func wantStatus(t fuzzT, oks map[string]int, call string, c fuzzCaller, req proto.Message, err error) {
	t.Helper()
	s, ok := status.FromError(err)
	if !ok {
		t.Fatalf("%s(%v) from caller %q: error without a status: %v", call, req, c.name, err)
	}
	if code := s.Code(); code == codes.Unknown || code == codes.Internal {
		t.Fatalf("%s(%v) from caller %q: %v", call, req, c.name, err)
	}
	if !c.identified && err == nil {
		t.Fatalf("%s(%v) succeeded for caller %q, who has no identity", call, req, c.name)
	}
	if err == nil {
		oks[call]++
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

// panicTB fails by panicking (the world's helpers, inside a fuzz target).
type panicTB struct{ testing.TB }

func (panicTB) Helper()           {}
func (panicTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

// brokenOffload is a Server with one handler broken as a careless change could break it.
type brokenOffload struct {
	*Server
	open func(sv *Server, ctx context.Context, req *pb.OpenSessionRequest) (*pb.OpenSessionResponse, error)
	step func(sv *Server, req *pb.GetStepRequest, stream grpc.ServerStreamingServer[pb.OffloadSample]) error
}

func (b brokenOffload) OpenSession(ctx context.Context, req *pb.OpenSessionRequest) (*pb.OpenSessionResponse, error) {
	if b.open != nil {
		return b.open(b.Server, ctx, req)
	}
	return b.Server.OpenSession(ctx, req)
}

func (b brokenOffload) GetStep(req *pb.GetStepRequest, stream grpc.ServerStreamingServer[pb.OffloadSample]) error {
	if b.step != nil {
		return b.step(b.Server, req, stream)
	}
	return b.Server.GetStep(req, stream)
}

// TestFuzzOffloadCatches: the fuzz target's checks fail on handlers broken in the ways they
// look for, and pass on the real one, with the seeds as inputs.
func TestFuzzOffloadCatches(t *testing.T) {
	fz := newOffloadFuzz(t)
	sv := fz.api.(*Server)
	var seeds [][]byte
	for _, s := range fz.seeds() {
		b, _ := proto.Marshal(s)
		seeds = append(seeds, b)
	}
	for _, tc := range []struct {
		name string
		api  pb.OffloadServer
		want string // in the failure; "" for none
	}{
		{"the real server", sv, ""},
		{"an error without a status", brokenOffload{Server: sv, open: func(sv *Server, ctx context.Context, req *pb.OpenSessionRequest) (*pb.OpenSessionResponse, error) {
			return nil, errors.New("open session: something went wrong")
		}}, "error without a status"},
		{"an error no table maps", brokenOffload{Server: sv, open: func(sv *Server, ctx context.Context, req *pb.OpenSessionRequest) (*pb.OpenSessionResponse, error) {
			return nil, toStatus(errors.New("open session: something went wrong"))
		}}, "Internal"},
		{"the request's user trusted", brokenOffload{Server: sv, open: func(sv *Server, ctx context.Context, req *pb.OpenSessionRequest) (*pb.OpenSessionResponse, error) {
			res, err := sv.Sessions.Open(ctx, req.GetUser(), openRequestFromProto(req))
			if err != nil {
				return nil, toStatus(err)
			}
			return openResultToProto(res), nil
		}}, "who has no identity"},
		{"a slot answered twice", brokenOffload{Server: sv, step: func(sv *Server, req *pb.GetStepRequest, stream grpc.ServerStreamingServer[pb.OffloadSample]) error {
			if err := sv.GetStep(req, stream); err != nil {
				return err
			}
			if len(req.GetSlots()) > 0 {
				return stream.Send(&pb.OffloadSample{Step: req.GetStep(), Slot: req.GetSlots()[0], Error: "again"})
			}
			return nil
		}}, "samples for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var failures []string
			for _, b := range seeds {
				r := &fuzzcheck.Recorder{}
				if f := r.Run(func() { fz.check(r, tc.api, b) }); f != "" {
					failures = append(failures, f)
				}
			}
			if tc.want == "" {
				for _, call := range []string{"OpenSession", "GetStep samples", "GetStepBatch samples", "CloseSession", "ReadRange", "NodeStatus", "SetGovernor"} {
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
