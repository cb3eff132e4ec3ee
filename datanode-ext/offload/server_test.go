package offload

import (
	"context"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/xformgraph"
)

// TestOpenAndClose: a session opens with the node's answer filled in, is counted, and is gone
// after CloseSession (for its owner only).
func TestOpenAndClose(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{})
	ctx := context.Background()
	req := w.openProto()
	req.Lookahead = 2
	resp, err := n.c.OpenSession(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(resp.GetSessionId()) {
		t.Errorf("session id %q, want 32 hex digits", resp.GetSessionId())
	}
	want := &pb.OpenSessionResponse{SessionId: resp.GetSessionId(), DatanodeUuid: "dn-a", XferAddr: "x:1",
		DeterminismDomain: xformgraph.Domain().String(), DomainMatch: true, Lookahead: 2, Version: "test"}
	if !proto.Equal(resp, want) {
		t.Errorf("OpenSession answered %v, want %v", resp, want)
	}
	c := n.mgr.Counters()
	// Steps 0..2 prepared, rank 0's two slots each, all owned by the only member.
	if c.Sessions != 1 || c.SessionsOpened != 1 || c.SessionsRawOnly != 0 || c.DomainMismatches != 0 || c.QueuedJobs != 6 {
		t.Errorf("after open: %+v, want 1 session opened, 6 jobs queued", c)
	}
	other, err := n.c.OpenSession(ctx, w.openProto())
	if err != nil {
		t.Fatal(err)
	}
	if other.GetSessionId() == resp.GetSessionId() || other.GetLookahead() != 4 {
		t.Errorf("second session: id %q (first %q), lookahead %d (the default is 4)", other.GetSessionId(), resp.GetSessionId(), other.GetLookahead())
	}

	if _, err := n.c.CloseSession(ctx, &pb.CloseSessionRequest{User: "bob", SessionId: resp.GetSessionId()}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("bob closing alice's session: %v, want PermissionDenied", err)
	}
	if _, err := n.c.CloseSession(ctx, &pb.CloseSessionRequest{User: "alice", SessionId: resp.GetSessionId()}); err != nil {
		t.Fatal(err)
	}
	if c := n.mgr.Counters(); c.Sessions != 1 || c.QueuedJobs != 5*2 {
		t.Errorf("after close: %d sessions, %d jobs queued; want the other session's 1 and 10", c.Sessions, c.QueuedJobs)
	}
	for _, call := range []struct {
		name string
		err  func() error
	}{
		{"close again", func() error {
			_, err := n.c.CloseSession(ctx, &pb.CloseSessionRequest{User: "alice", SessionId: resp.GetSessionId()})
			return err
		}},
		{"step of a closed session", func() error {
			_, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: resp.GetSessionId(), Slots: []uint32{0}})
			return err
		}},
	} {
		err := call.err()
		if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "open a new one") {
			t.Errorf("%s: %v, want NotFound telling to open a new session", call.name, err)
		}
	}
}

// TestOpenCountsModes: raw-only sessions and readers of another determinism domain are
// counted; a raw-only session prepares nothing.
func TestOpenCountsModes(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{})
	req := w.openProto()
	req.RawOnly, req.DeterminismDomain = true, "xformgraph=0 other"
	resp, err := n.c.OpenSession(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetDomainMatch() || resp.GetDeterminismDomain() != xformgraph.Domain().String() {
		t.Errorf("domain %q match %v, want the node's own and no match", resp.GetDeterminismDomain(), resp.GetDomainMatch())
	}
	if c := n.mgr.Counters(); c.SessionsOpened != 1 || c.SessionsRawOnly != 1 || c.DomainMismatches != 1 || c.QueuedJobs != 0 {
		t.Errorf("counters %+v, want 1 opened, raw-only, mismatched, and no job", c)
	}
}

// TestOpenRejects: a bad request is refused with its own code and a message that says what is
// wrong; the checks that do not need the index run before the node locates or reads anything,
// and no refused request leaves a session or a job behind.
func TestOpenRejects(t *testing.T) {
	w := newWorld(t, 8, "")
	w.readers["bob"] = false
	n := startNode(t, w, "dn-a", nodeOpts{})
	for _, tc := range []struct {
		name    string
		edit    func(r *pb.OpenSessionRequest)
		code    codes.Code
		msg     string
		reads   bool // the node asked the DataNode for the index before it refused
		locates bool // the node asked namenode-ext before it refused
	}{
		{"no user", func(r *pb.OpenSessionRequest) { r.User = "" }, codes.InvalidArgument, "user", false, false},
		{"no schedule", func(r *pb.OpenSessionRequest) { r.Schedule = nil }, codes.InvalidArgument, "no spec", false, false},
		{"world size 0", func(r *pb.OpenSessionRequest) { r.Schedule.WorldSize = 0 }, codes.InvalidArgument, "world", false, false},
		{"huge batch", func(r *pb.OpenSessionRequest) { r.Schedule.GlobalBatch = 1 << 30 }, codes.InvalidArgument, "batch", false, false},
		{"bad graph", func(r *pb.OpenSessionRequest) { r.Schedule.Sources[0].Graph.Nodes[0].Op = "rm_rf" }, codes.InvalidArgument, `source "img"`, false, false},
		{"rank", func(r *pb.OpenSessionRequest) { r.Rank = 2 }, codes.InvalidArgument, "rank 2, world_size 2", false, false},
		{"sources", func(r *pb.OpenSessionRequest) { r.Sources = nil }, codes.InvalidArgument, "0 sources for a schedule of 1", false, false},
		{"lookahead", func(r *pb.OpenSessionRequest) { r.Lookahead = 100000 }, codes.InvalidArgument, "lookahead 100000, limit 64", false, false},
		{"no members", func(r *pb.OpenSessionRequest) { r.Members = nil }, codes.InvalidArgument, "0 members, want 1..256", false, false},
		{"member without a UUID", func(r *pb.OpenSessionRequest) { r.Members[0].DatanodeUuid = "" }, codes.InvalidArgument, "member 0: a DataNode UUID has 1..128 characters", false, false},
		{"member not a UUID", func(r *pb.OpenSessionRequest) { r.Members[0].DatanodeUuid = "127.0.0.1:22" }, codes.InvalidArgument, "member 0: a DataNode UUID has only", false, false},
		{"member twice", func(r *pb.OpenSessionRequest) { r.Members = append(r.Members, r.Members[0]) }, codes.InvalidArgument, "member dn-a listed twice", false, false},
		{"not a member", func(r *pb.OpenSessionRequest) { r.Members[0].DatanodeUuid = "dn-x" }, codes.InvalidArgument, "this DataNode (dn-a) is not among the session's members", false, false},
		{"no index SHA-256", func(r *pb.OpenSessionRequest) { r.Sources[0].IndexSha256 = nil }, codes.InvalidArgument, "source 0: index_sha256 of 0 bytes", false, false},
		{"changed index", func(r *pb.OpenSessionRequest) { r.Sources[0].IndexSha256 = make([]byte, 32) }, codes.FailedPrecondition, "the index changed", true, true},
		{"another dataset", func(r *pb.OpenSessionRequest) { r.Schedule.Sources[0].Dataset = "/data/u" }, codes.NotFound, "locate /data/u/_newtricks_index.pb", false, true},
		// The NameNode refuses bob (the dataset is alice's): before a byte is read, with its
		// own message.
		{"another user's dataset", func(r *pb.OpenSessionRequest) { r.User = "bob" }, codes.PermissionDenied, "Permission denied: user=bob", false, true},
		{"past the end", func(r *pb.OpenSessionRequest) { r.StartStep = 20 }, codes.InvalidArgument, "start step 20 is past the schedule", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := w.openProto()
			tc.edit(req)
			before, located := n.host.calls.Load(), n.ns.calls.Load()
			_, err := n.c.OpenSession(context.Background(), req)
			if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("%v, want %v saying %q", err, tc.code, tc.msg)
			}
			if read := n.host.calls.Load() > before; read != tc.reads {
				t.Errorf("the node read the index: %v, want %v", read, tc.reads)
			}
			if loc := n.ns.calls.Load() > located; loc != tc.locates {
				t.Errorf("the node asked namenode-ext: %v, want %v", loc, tc.locates)
			}
			if c := n.mgr.Counters(); c.Sessions != 0 || c.SessionsOpened != 0 || c.QueuedJobs != 0 {
				t.Errorf("a refused open left %d sessions, %d jobs", c.Sessions, c.QueuedJobs)
			}
		})
	}
}

// TestOpenLimits: sessions.max is checked before the request itself, and frees up on close;
// a node that does not know its DataNode's identity yet refuses as unavailable.
func TestOpenLimits(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{cfg: Config{MaxSessions: 1}})
	ctx := context.Background()
	first, err := n.c.OpenSession(ctx, w.openProto())
	if err != nil {
		t.Fatal(err)
	}
	bad := w.openProto()
	bad.Schedule.WorldSize = 0
	for _, req := range []*pb.OpenSessionRequest{w.openProto(), bad} {
		if _, err := n.c.OpenSession(ctx, req); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "1 sessions open or opening, limit 1") {
			t.Errorf("open beyond sessions.max: %v, want ResourceExhausted", err)
		}
	}
	if _, err := n.c.CloseSession(ctx, &pb.CloseSessionRequest{User: "alice", SessionId: first.GetSessionId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.OpenSession(ctx, w.openProto()); err != nil {
		t.Errorf("open after close: %v", err)
	}

	n.self.Store("") // full is said before anything about the node itself
	if _, err := n.c.OpenSession(ctx, w.openProto()); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("open on a full node that lost its identity: %v, want ResourceExhausted", err)
	}
	unknown := startNode(t, w, "dn-a", nodeOpts{})
	unknown.self.Store("")
	if _, err := unknown.c.OpenSession(ctx, w.openProto()); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "identity") {
		t.Errorf("open before the DataNode's identity is known: %v, want Unavailable", err)
	}
	if _, err := unknown.c.NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: "alice"}); status.Code(err) != codes.Unavailable {
		t.Errorf("NodeStatus before the identity is known: %v, want Unavailable", err)
	}
}

// TestIdleSessionsExpire: the reaper closes a session unused for session.idle.ms.
func TestIdleSessionsExpire(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{cfg: Config{Idle: time.Second}})
	kept, old := n.open(t, w.openRequest()), n.open(t, w.openRequest())
	n.mgr.mu.Lock()
	old.lastUsed = time.Now().Add(-2 * time.Second)
	n.mgr.reapLocked()
	n.mgr.mu.Unlock()
	if _, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: old.id}); status.Code(err) != codes.NotFound {
		t.Errorf("step of an expired session: %v, want NotFound", err)
	}
	if _, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: kept.id}); err != nil {
		t.Errorf("step of a session in use: %v", err)
	}
	if c := n.mgr.Counters(); c.Sessions != 1 || c.QueuedJobs != 5*2 {
		t.Errorf("after expiry: %d sessions, %d jobs; want 1 and the kept session's 10", c.Sessions, c.QueuedJobs)
	}
}

// TestCallRejects: the other calls refuse bad requests with their code.
func TestCallRejects(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{})
	ctx := context.Background()
	open, err := n.c.OpenSession(ctx, w.openProto())
	if err != nil {
		t.Fatal(err)
	}
	id := open.GetSessionId()
	for _, tc := range []struct {
		name string
		req  *pb.GetStepRequest
		code codes.Code
		msg  string
	}{
		{"no user", &pb.GetStepRequest{SessionId: id}, codes.InvalidArgument, "user"},
		{"unknown session", &pb.GetStepRequest{User: "alice", SessionId: "nope"}, codes.NotFound, `session "nope"`},
		{"another user's session", &pb.GetStepRequest{User: "bob", SessionId: id}, codes.PermissionDenied, "belongs to another user"},
		{"slot of another rank", &pb.GetStepRequest{User: "alice", SessionId: id, Slots: []uint32{2}}, codes.InvalidArgument, "slot 2 is not in the rank's range [0, 2)"},
		{"too many slots", &pb.GetStepRequest{User: "alice", SessionId: id, Slots: []uint32{0, 1, 0}}, codes.InvalidArgument, "3 slots requested, the rank has 2"},
		{"step past the end", &pb.GetStepRequest{User: "alice", SessionId: id, Step: 20}, codes.InvalidArgument, "step 20 is past the schedule"},
	} {
		_, err := n.getStep(t, tc.req)
		if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("GetStep %s: %v, want %v saying %q", tc.name, err, tc.code, tc.msg)
		}
		st, err := n.c.GetStepBatch(ctx, tc.req)
		if err == nil {
			_, err = st.Recv()
		}
		if status.Code(err) != tc.code {
			t.Errorf("GetStepBatch %s: %v, want %v", tc.name, err, tc.code)
		}
	}

	blk := w.locate(w.ix.FilePath(0), "alice").GetBlocks()[0]
	for _, tc := range []struct {
		name string
		req  *pb.ReadRangeRequest
		code codes.Code
		msg  string
	}{
		{"no block", &pb.ReadRangeRequest{User: "alice", Length: 1}, codes.InvalidArgument, "block pool id and block id are required"},
		{"no pool", &pb.ReadRangeRequest{User: "alice", Block: &pb.LocatedBlock{BlockId: 1}, Length: 1}, codes.InvalidArgument, "block pool id"},
		{"huge range", &pb.ReadRangeRequest{User: "alice", Block: blk, Length: 1 << 30}, codes.InvalidArgument, "length must be in [0, 16777216]"},
		{"negative offset", &pb.ReadRangeRequest{User: "alice", Block: blk, Offset: -1, Length: 1}, codes.InvalidArgument, "range [-1, +1)"},
		{"past the block", &pb.ReadRangeRequest{User: "alice", Block: blk, Offset: 500, Length: 13}, codes.InvalidArgument, "[500, +13) of block 2 of 512 bytes"},
		{"end past int64", &pb.ReadRangeRequest{User: "alice", Block: blk, Offset: math.MaxInt64 - 5, Length: 1 << 20}, codes.InvalidArgument, "of block 2 of 512 bytes"},
		{"another user's token", &pb.ReadRangeRequest{User: "bob", Block: blk, Length: 1}, codes.PermissionDenied, "not valid for bob"},
	} {
		_, err := n.c.ReadRange(ctx, tc.req)
		if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ReadRange %s: %v, want %v saying %q", tc.name, err, tc.code, tc.msg)
		}
	}

	// Governor thresholds: administrators only, validated.
	if _, err := n.c.SetGovernor(ctx, &pb.SetGovernorRequest{User: "alice", ThresholdHigh: 0.9, ThresholdLow: 0.5}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("SetGovernor as alice: %v, want PermissionDenied", err)
	}
	if _, err := n.c.SetGovernor(ctx, &pb.SetGovernorRequest{User: "hdfs", ThresholdHigh: 0.5, ThresholdLow: 0.9}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("SetGovernor low > high: %v, want InvalidArgument", err)
	}
	st, err := n.c.SetGovernor(ctx, &pb.SetGovernorRequest{User: "hdfs", ThresholdHigh: 0.9, ThresholdLow: 0.5})
	if err != nil || st.GetThresholdHigh() != 0.9 || st.GetThresholdLow() != 0.5 {
		t.Errorf("SetGovernor as hdfs: %v %v", st, err)
	}
}

// TestNodeStatus: the node reports its identity, governor, queue and totals.
func TestNodeStatus(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{cfg: Config{Workers: 2, QueueMaxBytes: 8 << 20}})
	n.open(t, w.openRequest())
	n.shed(t, true)
	st, err := n.c.NodeStatus(context.Background(), &pb.OffloadNodeStatusRequest{User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	want := &pb.OffloadNodeStatus{DatanodeUuid: "dn-a", XferAddr: "x:1", DeterminismDomain: xformgraph.Domain().String(),
		Shedding: true, CpuOther: 0.9, ThresholdHigh: 0.5, ThresholdLow: 0.4, Workers: 2, CpuBudget: 2, Sessions: 1,
		QueueMaxBytes: 8 << 20, ShedTransitions: 1}
	if !proto.Equal(st, want) {
		t.Errorf("NodeStatus %v, want %v", st, want)
	}
	if _, err := n.c.NodeStatus(context.Background(), &pb.OffloadNodeStatusRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("NodeStatus without a user: %v, want InvalidArgument", err)
	}
}
