package nnext

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/namenode-ext/events"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/nnhost"
	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

func startTerms(t *testing.T, host *nnhosttest.FakeHost) (*terms, *events.Sink, *int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sink := events.NewSink(100, -1)
	builds := 0
	build := func(bool) (*termParts, error) {
		builds++
		hs, err := hotspot.New(hotspot.DefaultConfig(), host, hclog.NewNullLogger())
		if err != nil {
			return nil, err
		}
		return &termParts{hotspot: hs}, nil
	}
	first, err := build(true)
	if err != nil {
		t.Fatal(err)
	}
	tr := newTerms(ctx, host, sink, build, "/", 50*time.Millisecond, "nn0:8020", hclog.NewNullLogger())
	done := make(chan struct{})
	go func() { tr.run(first); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return tr, sink, &builds
}

func deliver(t *testing.T, s *events.Sink, b *pb.EventBatch) *pb.DeliverAck {
	t.Helper()
	ack, err := s.Deliver(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return ack
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func savedTxid(t *testing.T, h *nnhosttest.FakeHost) int64 {
	t.Helper()
	raw, ok := h.XAttr("/", PositionXAttr)
	if !ok {
		return -2
	}
	var p position
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return p.Txid
}

// TestTermsHA: beside a standby NameNode the gated services answer UNAVAILABLE "standby";
// when it becomes active a term starts with fresh subsystems, tells the hook to resume after
// the position in HDFS, and keeps the hook's safe txid there; back to standby it stops; the
// next active term starts afresh after the position saved last.
func TestTermsHA(t *testing.T) {
	host := nnhosttest.NewFakeHost(3)
	v, _ := json.Marshal(position{Txid: 41})
	if err := host.SetXAttr(context.Background(), "/", PositionXAttr, v, nnhost.AsService); err != nil {
		t.Fatal(err)
	}
	tr, sink, builds := startTerms(t, host)
	if err := tr.gate(pb.Hints_Create_FullMethodName); err != nil {
		t.Fatalf("gate before any batch: %v", err)
	}
	standby := &pb.EventBatch{NamenodeState: pb.NameNodeState_NAMENODE_STATE_STANDBY, Ha: true, SafeTxid: -1}
	deliver(t, sink, standby)
	waitFor(t, "standby gate", func() bool { return tr.gate(pb.Mirror_Status_FullMethodName) != nil })
	for _, m := range []string{pb.Hints_List_FullMethodName, pb.Namespace_Locate_FullMethodName, pb.Mirror_Wait_FullMethodName} {
		err := tr.gate(m)
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "standby") {
			t.Fatalf("gate(%s) on standby = %v, want UNAVAILABLE standby", m, err)
		}
	}
	for _, m := range []string{pb.DataNodeDirectory_Register_FullMethodName, pb.Namespace_RecentEvents_FullMethodName} {
		if err := tr.gate(m); err != nil {
			t.Fatalf("%s is not gated: %v", m, err)
		}
	}
	if _, err := (hintsSwitch{t: tr}).List(context.Background(), &pb.ListHintsRequest{User: "alice"}); status.Code(err) != codes.Unavailable {
		t.Fatalf("Hints.List on standby: %v", err)
	}

	active := &pb.EventBatch{NamenodeState: pb.NameNodeState_NAMENODE_STATE_ACTIVE, ActiveTerm: 1, Ha: true, SafeTxid: -1}
	var ack *pb.DeliverAck
	waitFor(t, "resume for term 1", func() bool {
		ack = deliver(t, sink, active)
		return ack.GetResumeTerm() == 1
	})
	if ack.GetResumeAfterTxid() != 41 {
		t.Fatalf("resume after %d, want 41 (the position in HDFS)", ack.GetResumeAfterTxid())
	}
	if tr.gate(pb.Hints_Create_FullMethodName) != nil || tr.current() == nil {
		t.Fatal("no term running while active")
	}
	// Events after the position are accepted again; the safe txid goes to HDFS.
	ack = deliver(t, sink, &pb.EventBatch{NamenodeState: pb.NameNodeState_NAMENODE_STATE_ACTIVE, ActiveTerm: 1, Ha: true, SafeTxid: 41,
		Events: []*pb.Event{{Kind: &pb.Event_Namespace{Namespace: &pb.NamespaceEvent{Txid: 42, Type: pb.NamespaceEvent_CLOSE, Path: "/a"}}}}})
	if ack.GetLastTxid() != 42 {
		t.Fatalf("last txid %d, want 42", ack.GetLastTxid())
	}
	deliver(t, sink, &pb.EventBatch{NamenodeState: pb.NameNodeState_NAMENODE_STATE_ACTIVE, ActiveTerm: 1, Ha: true, SafeTxid: 45})
	waitFor(t, "position 45 saved", func() bool { return savedTxid(t, host) == 45 })

	deliver(t, sink, &pb.EventBatch{NamenodeState: pb.NameNodeState_NAMENODE_STATE_STANDBY, ActiveTerm: 1, Ha: true, SafeTxid: -1})
	waitFor(t, "term stopped", func() bool { return tr.current() == nil && tr.gate(pb.Hints_Create_FullMethodName) != nil })
	// The other NameNode's namenode-ext moved the position meanwhile.
	v, _ = json.Marshal(position{Txid: 90})
	_ = host.SetXAttr(context.Background(), "/", PositionXAttr, v, nnhost.AsService)
	waitFor(t, "resume for term 2", func() bool {
		ack = deliver(t, sink, &pb.EventBatch{NamenodeState: pb.NameNodeState_NAMENODE_STATE_ACTIVE, ActiveTerm: 2, Ha: true, SafeTxid: -1})
		return ack.GetResumeTerm() == 2
	})
	if ack.GetResumeAfterTxid() != 90 || ack.GetLastTxid() != 90 {
		t.Fatalf("term 2 resumes after %d (last %d), want 90", ack.GetResumeAfterTxid(), ack.GetLastTxid())
	}
	if *builds != 2 {
		t.Fatalf("%d builds, want 2 (the first term's, then term 2's)", *builds)
	}
}

// TestTermsWithoutHA: a NameNode without HA is active from its first batch: one term, no
// resume handshake, nothing written to HDFS.
func TestTermsWithoutHA(t *testing.T) {
	host := nnhosttest.NewFakeHost(3)
	tr, sink, _ := startTerms(t, host)
	b := &pb.EventBatch{NamenodeState: pb.NameNodeState_NAMENODE_STATE_ACTIVE, ActiveTerm: 1, SafeTxid: -1}
	deliver(t, sink, b)
	waitFor(t, "term", func() bool { return tr.current() != nil })
	for range 5 {
		if ack := deliver(t, sink, b); ack.GetResumeTerm() != 0 {
			t.Fatalf("resume handshake without HA: %v", ack)
		}
		time.Sleep(60 * time.Millisecond)
	}
	if _, ok := host.XAttr("/", PositionXAttr); ok {
		t.Fatal("position written without HA")
	}
}

// TestTermsOldHook: a hook that reports no state (an older jar) runs one term for good.
func TestTermsOldHook(t *testing.T) {
	tr, sink, _ := startTerms(t, nnhosttest.NewFakeHost(3))
	deliver(t, sink, &pb.EventBatch{})
	waitFor(t, "term", func() bool { return tr.current() != nil })
	if err := tr.gate(pb.Hints_Create_FullMethodName); err != nil {
		t.Fatal(err)
	}
}
