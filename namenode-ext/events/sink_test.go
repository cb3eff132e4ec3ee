package events

import (
	"context"
	"testing"
	"time"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

func nsEvent(txid int64, typ pb.NamespaceEvent_Type, path string) *pb.Event {
	return &pb.Event{Kind: &pb.Event_Namespace{Namespace: &pb.NamespaceEvent{Txid: txid, Type: typ, Path: path}}}
}

func auditEvent(cmd, src string) *pb.Event {
	return &pb.Event{Kind: &pb.Event_Audit{Audit: &pb.AuditEvent{Cmd: cmd, Src: src, Allowed: true}}}
}

func TestDeliverDedupesRetriedNamespaceEvents(t *testing.T) {
	s := NewSink(10, -1)
	var seen []string
	unsubscribe := s.Subscribe(func(e Event) { seen = append(seen, e.Path()) })
	batch := &pb.EventBatch{Events: []*pb.Event{
		nsEvent(5, pb.NamespaceEvent_CREATE, "/a"), auditEvent("open", "/b"), nsEvent(6, pb.NamespaceEvent_CLOSE, "/a"),
	}, AuditDroppedTotal: 3}
	ack, err := s.Deliver(context.Background(), batch)
	if err != nil || ack.GetLastTxid() != 6 {
		t.Fatalf("Deliver = %v, %v; want last txid 6", ack, err)
	}
	// The hook retries a batch whose acknowledgement it lost: namespace events must not repeat.
	retry := &pb.EventBatch{Events: []*pb.Event{nsEvent(6, pb.NamespaceEvent_CLOSE, "/a"), nsEvent(7, pb.NamespaceEvent_UNLINK, "/a")}}
	if ack, _ = s.Deliver(context.Background(), retry); ack.GetLastTxid() != 7 {
		t.Fatalf("last txid = %d, want 7", ack.GetLastTxid())
	}
	want := []string{"/a", "/b", "/a", "/a"}
	if len(seen) != len(want) {
		t.Fatalf("subscriber saw %v, want %v", seen, want)
	}
	unsubscribe()
	s.Deliver(context.Background(), &pb.EventBatch{Events: []*pb.Event{auditEvent("open", "/c")}})
	if len(seen) != len(want) {
		t.Fatalf("subscriber called after unsubscribe: %v", seen)
	}
	last, received, _ := s.Stats()
	if last != 7 || received != 5 {
		t.Fatalf("Stats = %d, %d; want 7, 5", last, received)
	}
}

func TestRecentIsBoundedAndFiltered(t *testing.T) {
	s := NewSink(3, -1)
	for i, p := range []string{"/x/1", "/y/2", "/x/3", "/x/4", "/y/5"} {
		if _, err := s.Deliver(context.Background(), &pb.EventBatch{Events: []*pb.Event{nsEvent(int64(i+1), pb.NamespaceEvent_CLOSE, p)}}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		limit  int
		prefix string
		want   []string
	}{
		{0, "", []string{"/x/3", "/x/4", "/y/5"}},
		{1, "", []string{"/y/5"}},
		{0, "/x/", []string{"/x/3", "/x/4"}},
	}
	for _, tc := range tests {
		got := s.Recent(tc.limit, tc.prefix)
		var paths []string
		for _, e := range got {
			paths = append(paths, e.Path())
		}
		if len(paths) != len(tc.want) {
			t.Errorf("Recent(%d, %q) = %v, want %v", tc.limit, tc.prefix, paths, tc.want)
			continue
		}
		for i := range paths {
			if paths[i] != tc.want[i] {
				t.Errorf("Recent(%d, %q) = %v, want %v", tc.limit, tc.prefix, paths, tc.want)
				break
			}
		}
	}
}

func TestSetRetainKeepsNewest(t *testing.T) {
	s := NewSink(4, -1)
	for i := 1; i <= 6; i++ {
		s.Deliver(context.Background(), &pb.EventBatch{Events: []*pb.Event{nsEvent(int64(i), pb.NamespaceEvent_CLOSE, "/f")}})
	}
	s.SetRetain(2)
	got := s.Recent(0, "")
	if len(got) != 2 || got[0].Namespace.Txid != 5 || got[1].Namespace.Txid != 6 {
		t.Fatalf("after SetRetain(2): %+v", got)
	}
	s.SetRetain(5)
	s.Deliver(context.Background(), &pb.EventBatch{Events: []*pb.Event{nsEvent(7, pb.NamespaceEvent_CLOSE, "/f")}})
	if got = s.Recent(0, ""); len(got) != 3 || got[2].Namespace.Txid != 7 {
		t.Fatalf("after SetRetain(5) + 1 event: %d events", len(got))
	}
}

func TestDurableWaitsForEveryCursorAndFilterIsSentOnce(t *testing.T) {
	s := NewSink(10, -1)
	s.Want(Interest{Namespace: []string{"CLOSE", "RENAME"}, PathPrefixes: []string{"/ckpt/"}})
	s.Want(Interest{Audit: []string{"open"}})
	f := s.Filter()
	if len(f.GetAuditCommands()) != 1 || len(f.GetNamespaceTypes()) != 2 || len(f.GetNamespacePathPrefixes()) != 1 {
		t.Fatalf("filter %v", f)
	}
	ack, _ := s.Deliver(context.Background(), &pb.EventBatch{Events: []*pb.Event{nsEvent(5, pb.NamespaceEvent_CLOSE, "/ckpt/a")}})
	if ack.GetDurableTxid() != 5 || ack.GetFilter() != nil {
		t.Fatalf("ack %v: want durable 5 and no filter (Configure sent it)", ack)
	}
	c := s.NewCursor(4)
	ack, _ = s.Deliver(context.Background(), &pb.EventBatch{Events: []*pb.Event{nsEvent(6, pb.NamespaceEvent_CLOSE, "/ckpt/b")}})
	if ack.GetLastTxid() != 6 || ack.GetDurableTxid() != 4 {
		t.Fatalf("ack %v: want last 6, durable 4 (the cursor)", ack)
	}
	c.Mark(6)
	withdraw := s.Want(Interest{Namespace: []string{"UNLINK"}}) // every path
	ack, _ = s.Deliver(context.Background(), &pb.EventBatch{})
	if ack.GetDurableTxid() != 6 || ack.GetFilter() == nil || len(ack.GetFilter().GetNamespacePathPrefixes()) != 0 {
		t.Fatalf("ack %v: want durable 6 and the new filter for every path", ack)
	}
	if r, _, g := c.Stream(); r != 0 || g != 0 {
		t.Fatalf("stream resume %d, gaps %d before any resume", r, g)
	}
	withdraw()
	c.Close()
	// The hook resumes after the durable txid: repeats are dropped.
	ack, _ = s.Deliver(context.Background(), &pb.EventBatch{ResumeTxid: 5, Events: []*pb.Event{
		nsEvent(5, pb.NamespaceEvent_CLOSE, "/ckpt/a"), nsEvent(6, pb.NamespaceEvent_CLOSE, "/ckpt/b"), nsEvent(7, pb.NamespaceEvent_CLOSE, "/ckpt/c")}})
	if ack.GetLastTxid() != 7 || ack.GetFilter() == nil {
		t.Fatalf("ack %v", ack)
	}
	if _, received, _ := s.Stats(); received != 3 {
		t.Fatalf("received %d, want 3 (5, 6, 7 once each)", received)
	}
	// A durable subscriber learns where the stream resumed and of skipped edits.
	c2 := s.NewCursor(7)
	s.Deliver(context.Background(), &pb.EventBatch{NamespaceGapsTotal: 1})
	if r, f, g := c2.Stream(); r != 5 || f != 5 || g != 1 {
		t.Fatalf("stream resume %d, first %d, gaps %d; want 5, 5, 1", r, f, g)
	}
}

func TestParseInterest(t *testing.T) {
	in, err := ParseInterest(" CLOSE, audit:open ,RENAME")
	if err != nil || len(in.Namespace) != 2 || len(in.Audit) != 1 || in.Audit[0] != "open" {
		t.Fatalf("ParseInterest = %+v, %v", in, err)
	}
	// A subscription named in configuration takes every audited record: no repeat hold.
	if in.AuditMinRepeats != 0 || in.AuditRepeatWindow != 0 {
		t.Fatalf("ParseInterest = %+v: want no audit repeat hold", in)
	}
	s := NewSink(1, -1)
	s.Want(Interest{Audit: []string{"open"}, AuditMinRepeats: 8, AuditRepeatWindow: 10 * time.Second})
	s.Want(in)
	if f := s.Filter(); f.GetAuditMinRepeats() > 1 {
		t.Fatalf("filter %v: a parsed audit:open must forward every open", f)
	}
	if _, err := ParseInterest("close"); err == nil {
		t.Fatal("lower-case type accepted")
	}
}

func TestAuditRepeatHoldUnion(t *testing.T) {
	open := func(n int, w time.Duration) Interest {
		return Interest{Audit: []string{"open"}, AuditMinRepeats: n, AuditRepeatWindow: w}
	}
	tests := []struct {
		name       string
		interests  []Interest
		wantMin    int32
		wantWindow int64
	}{
		{"none", nil, 0, 0},
		{"one hold", []Interest{open(8, 10*time.Second)}, 8, 10000},
		{"least repeats, longest window", []Interest{open(8, 10*time.Second), open(3, 30*time.Second)}, 3, 30000},
		{"K=1 forwards every open", []Interest{open(1, 10*time.Second)}, 0, 0},
		{"one that wants every record wins", []Interest{open(8, 10*time.Second), {Audit: []string{"create"}}}, 0, 0},
		{"no window, no hold", []Interest{open(8, 0)}, 0, 0},
		{"window rounded up to ms", []Interest{open(2, 1500*time.Microsecond)}, 2, 2},
		{"namespace-only interests do not matter", []Interest{open(4, time.Second), {Namespace: []string{"CLOSE"}}}, 4, 1000},
	}
	for _, tc := range tests {
		s := NewSink(1, -1)
		for _, in := range tc.interests {
			s.Want(in)
		}
		f := s.Filter()
		if f.GetAuditMinRepeats() != tc.wantMin || f.GetAuditRepeatWindowMs() != tc.wantWindow {
			t.Errorf("%s: filter min_repeats %d window %d ms, want %d, %d", tc.name, f.GetAuditMinRepeats(), f.GetAuditRepeatWindowMs(), tc.wantMin, tc.wantWindow)
		}
	}
	// Withdrawing the interest that wanted every record lets the hold apply (sent with an ack).
	s := NewSink(1, -1)
	s.Want(open(8, 10*time.Second))
	withdraw := s.Want(Interest{Audit: []string{"open"}})
	if f := s.Filter(); f.GetAuditMinRepeats() != 0 {
		t.Fatalf("filter %v", f)
	}
	withdraw()
	ack, _ := s.Deliver(context.Background(), &pb.EventBatch{})
	if ack.GetFilter().GetAuditMinRepeats() != 8 || ack.GetFilter().GetAuditRepeatWindowMs() != 10000 {
		t.Fatalf("ack filter %v: want the hold of 8 within 10000 ms", ack.GetFilter())
	}
}
