package offload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
)

// Requests from hostile callers (issue 25): every bound holds before anything is allocated,
// a panic fails a sample or a session and never the process, corrupt replicas are not served.

// findSlot returns a step of the first 20 in which the sample with this key is in rank 0's
// slots, and its slot.
func findSlot(t *testing.T, s *Session, key string) (uint64, uint32) {
	t.Helper()
	for step := uint64(0); step < 20; step++ {
		slots, err := s.plan.Step(step)
		if err != nil {
			t.Fatal(err)
		}
		for k := s.lo; k < s.hi; k++ {
			if s.idx[slots[k].Source].Sample(slots[k].Index).GetKey() == key {
				return step, uint32(k)
			}
		}
	}
	t.Fatalf("sample %q is in none of rank 0's 20 steps", key)
	return 0, 0
}

// claimHuge rewrites the world's index so that sample key claims n bytes (and its file n
// bytes), and returns the file's HDFS path: what a caller who writes its own index can claim.
// A true namenode-ext then says the file is shorter (the open is refused); claim makes node's
// namenode-ext say the same as the index (what the read path must survive: a namenode-ext that
// is wrong, or a layout the caller still controlled, as before issue 25's layout change).
func claimHuge(t *testing.T, w *world, key string, n int64) string {
	t.Helper()
	m := proto.Clone(w.ix.Proto()).(*pb.DatasetIndex)
	fi := -1
	for _, s := range m.GetSamples() {
		if s.GetKey() == key {
			fi = int(s.GetFile())
			s.Length = n - s.GetOffset()
		}
	}
	m.Files[fi].Length = n
	b, err := dataset.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, dataset.IndexName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if w.ix, err = dataset.Parse(b); err != nil {
		t.Fatal(err)
	}
	w.forget(path.Join(w.root, dataset.IndexName))
	return w.ix.FilePath(fi)
}

// claim makes n's namenode-ext answer length for the file at p (its last block that long).
func (n *node) claim(p string, length int64) {
	n.ns.lie = func(q string, lb *pb.LocatedBlocks) {
		if q != p {
			return
		}
		last := lb.Blocks[len(lb.Blocks)-1]
		last.NumBytes = length - last.GetOffset()
		lb.FileLength = length
	}
}

// TestHugeSampleClaims: a sample whose index entry and block list claim 2^62 bytes (the attack of
// issue 25: makeslice panicked in a worker and killed the process) fails alone with
// RESOURCE_EXHAUSTED naming the graph's input limit (the reader's own transform would refuse
// it too), on the transform path and on the raw path, before the DataNode is asked anything
// about it; the other samples of the step and the server go on. A real sample over a graph's
// input limit fails the same way; one over this node's read.max.bytes only is UNAVAILABLE (the
// reader reads it from HDFS: a node's own limit never changes what the trainer gets).
func TestHugeSampleClaims(t *testing.T) {
	for _, rawOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("raw_only=%v", rawOnly), func(t *testing.T) {
			w := newWorld(t, 8, "")
			n := startNode(t, w, "dn-a", nodeOpts{run: true})
			fp := claimHuge(t, w, "s02", 1<<62)
			// namenode-ext tells the truth: the index is stale, refused at open.
			_, err := n.mgr.Open(context.Background(), "alice", w.openRequest())
			if !errors.Is(err, ErrPrecondition) || !strings.Contains(err.Error(), "the index says 4611686018427387904 (stale index)") {
				t.Fatalf("open with an index claiming 2^62 bytes: %v, want FAILED_PRECONDITION (stale index)", err)
			}
			n.claim(fp, 1<<62)
			req := w.openRequest()
			req.RawOnly = rawOnly
			s := n.open(t, req)
			step, slot := findSlot(t, s, "s02")
			got, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: step, Slots: []uint32{0, 1}, MaxWaitMs: 10000})
			if err != nil {
				t.Fatal(err)
			}
			for k, smp := range got {
				if k != slot {
					expectSample(t, w, s, smp, step, !rawOnly)
					continue
				}
				if codes.Code(smp.GetErrorCode()) != codes.ResourceExhausted || !strings.Contains(smp.GetError(), "4611686018427387904 bytes, more than the graph's input limit (1073741824)") {
					t.Errorf("the 2^62-byte sample: %v %q, want ResourceExhausted naming the graph's input limit", codes.Code(smp.GetErrorCode()), smp.GetError())
				}
			}
			if _, err := n.c.NodeStatus(context.Background(), &pb.OffloadNodeStatusRequest{User: "alice"}); err != nil {
				t.Errorf("the node stopped serving: %v", err)
			}
			if c := n.mgr.Counters(); c.Panics != 0 || c.ErrorsByCode[codes.ResourceExhausted] != 1 {
				t.Errorf("panics %d, errors %v; want none and one ResourceExhausted", c.Panics, c.ErrorsByCode)
			}
		})
	}

	t.Run("graph input limit and read.max.bytes on real samples", func(t *testing.T) {
		w := newWorld(t, 8, "")
		w.spec.Sources[0].Graph.Limits = &xformv1.Limits{MaxInputBytes: 100}
		for _, raw := range []bool{false, true} {
			n := startNode(t, w, "dn-a", nodeOpts{run: true})
			req := w.openRequest()
			req.RawOnly = raw
			s := n.open(t, req)
			calls := n.host.calls.Load()
			got, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: 0, Slots: []uint32{0, 1}, MaxWaitMs: 10000})
			if err != nil {
				t.Fatal(err)
			}
			for _, smp := range got {
				if codes.Code(smp.GetErrorCode()) != codes.ResourceExhausted || !strings.Contains(smp.GetError(), "more than the graph's input limit (100)") {
					t.Errorf("raw %v: sample %q over the graph's input limit: %v %q", raw, smp.GetKey(), codes.Code(smp.GetErrorCode()), smp.GetError())
				}
			}
			if got := n.host.calls.Load(); got != calls {
				t.Errorf("raw %v: the DataNode was asked %d times about samples over the limit", raw, got-calls)
			}
		}
		w.spec.Sources[0].Graph.Limits = nil

		small := startNode(t, w, "dn-a", nodeOpts{cfg: Config{MaxReadBytes: 100}})
		req := w.openRequest()
		req.RawOnly = true
		s := small.open(t, req)
		got, err := small.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: 0, Slots: []uint32{0, 1}})
		if err != nil {
			t.Fatal(err)
		}
		for _, smp := range got {
			if codes.Code(smp.GetErrorCode()) != codes.Unavailable || !strings.Contains(smp.GetError(), "more than newtricks.datanode.ext.read.max.bytes (100) on this node: read it from HDFS") {
				t.Errorf("raw sample %q over read.max.bytes: %v %q, want Unavailable", smp.GetKey(), codes.Code(smp.GetErrorCode()), smp.GetError())
			}
		}
	})
}

// TestRecoversFromPanics: a read that panics (the fake DataNode panics resolving one block)
// fails that sample with INTERNAL, on a transform worker and on the raw path of GetStep; a panic
// while opening fails that OpenSession with INTERNAL and gives its session place back; the
// node keeps serving, and counts every panic.
func TestRecoversFromPanics(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{run: true, cfg: Config{MaxSessions: 1}})
	i, _ := w.ix.Lookup("s05")
	smp := w.ix.Sample(i)
	poison := w.locate(w.ix.FilePath(int(smp.GetFile())), "alice").GetBlocks()[0].GetBlockId()
	n.host.resolve = func(b *pb.LocatedBlock) { // before the open: the workers start at once
		if b.GetBlockId() == poison {
			var m map[string]int
			m["boom"]++ // a nil map write: a runtime panic, as a bug on hostile data would be
		}
	}
	s := n.open(t, w.openRequest())
	step, slot := findSlot(t, s, "s05")
	for _, raw := range []bool{false, true} {
		if raw {
			n.mgr.Close("alice", s.id)
			req := w.openRequest()
			req.RawOnly = true
			s = n.open(t, req)
		}
		got, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: step, Slots: []uint32{0, 1}, MaxWaitMs: 10000})
		if err != nil {
			t.Fatalf("raw %v: the step failed as a whole: %v", raw, err)
		}
		for k, g := range got {
			if k != slot {
				expectSample(t, w, s, g, step, !raw)
				continue
			}
			if codes.Code(g.GetErrorCode()) != codes.Internal || !strings.Contains(g.GetError(), "panic") && !strings.Contains(g.GetError(), "assignment to entry in nil map") {
				t.Errorf("raw %v: the poisoned sample: %v %q, want Internal", raw, codes.Code(g.GetErrorCode()), g.GetError())
			}
		}
	}
	if c := n.mgr.Counters(); c.Panics != 2 {
		t.Errorf("%d panics counted, want 2", c.Panics)
	}

	// A panic during the open (reading the index) fails that call only; the place it had
	// reserved is free again.
	n.mgr.Close("alice", s.id)
	n.host.resolve = func(*pb.LocatedBlock) { panic("index block") }
	_, err := n.c.OpenSession(context.Background(), w.openProto())
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "open session failed: index block") {
		t.Fatalf("open that panicked: %v, want Internal", err)
	}
	n.host.resolve = nil
	if _, err := n.c.OpenSession(context.Background(), w.openProto()); err != nil {
		t.Fatalf("open after a panicked open (sessions.max 1): %v", err)
	}
	if c := n.mgr.Counters(); c.Panics != 3 || c.Sessions != 1 {
		t.Errorf("%d panics, %d sessions; want 3 and 1", c.Panics, c.Sessions)
	}
}

// TestSessionCaps: the node's and each user's session caps are held across the slow open (the
// index reads): concurrent opens beyond a cap are refused at once with RESOURCE_EXHAUSTED while
// the first ones are still opening, other users are not affected by one user's cap, failed
// and closed sessions give their places back.
func TestSessionCaps(t *testing.T) {
	w := newWorld(t, 8, "")
	for _, u := range []string{"bob", "carol", "dave"} {
		w.readers[u] = true
	}
	n := startNode(t, w, "dn-a", nodeOpts{cfg: Config{MaxSessions: 5, MaxSessionsPerUser: 2}})
	gate := make(chan struct{})
	var mu sync.Mutex
	waiting := 0
	n.host.resolve = func(*pb.LocatedBlock) { // every open waits in its index read
		mu.Lock()
		waiting++
		mu.Unlock()
		<-gate
	}
	open := func(user string) (*pb.OpenSessionResponse, error) {
		req := w.openProto()
		req.User = user
		return n.c.OpenSession(context.Background(), req)
	}
	type result struct {
		user string
		id   string
		err  error
	}
	results := make(chan result, 16)
	start := func(user string, k int) {
		for range k {
			go func() {
				r, err := open(user)
				results <- result{user, r.GetSessionId(), err}
			}()
		}
	}
	start("alice", 6)
	// Four of alice's opens are refused while two wait in the DataNode.
	var refused []result
	for len(refused) < 4 {
		r := <-results
		if r.err == nil {
			t.Fatalf("an open of alice finished while the gate was closed")
		}
		refused = append(refused, r)
	}
	for _, r := range refused {
		if status.Code(r.err) != codes.ResourceExhausted || !strings.Contains(r.err.Error(), "user alice has 2 sessions open or opening, limit 2 (newtricks.datanode.ext.offload.sessions.max.per.user)") {
			t.Errorf("alice's third open: %v, want ResourceExhausted naming the per-user cap", r.err)
		}
	}
	start("bob", 2)
	start("carol", 1)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		wt := waiting
		mu.Unlock()
		if wt == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d opens waiting in the DataNode, want 5", wt)
		}
	}
	// The node is full (5) while every open is still in progress.
	if _, err := open("dave"); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "5 sessions open or opening, limit 5") {
		t.Errorf("dave's open on a full node: %v, want ResourceExhausted naming sessions.max", err)
	}
	close(gate)
	n.host.resolve = nil
	ids := map[string][]string{}
	for range 5 {
		r := <-results
		if r.err != nil {
			t.Errorf("%s: %v", r.user, r.err)
			continue
		}
		ids[r.user] = append(ids[r.user], r.id)
	}
	if len(ids["alice"]) != 2 || len(ids["bob"]) != 2 || len(ids["carol"]) != 1 {
		t.Errorf("sessions opened: %v, want alice 2, bob 2, carol 1", ids)
	}
	if c := n.mgr.Counters(); c.Sessions != 5 || c.SessionsRefused != 5 {
		t.Errorf("%d sessions, %d refused; want 5 and 5", c.Sessions, c.SessionsRefused)
	}
	// A close gives a place back, to that user or anyone.
	if err := n.mgr.Close("alice", ids["alice"][0]); err != nil {
		t.Fatal(err)
	}
	if _, err := open("alice"); err != nil {
		t.Errorf("alice after closing one: %v", err)
	}
	// A failed open holds nothing.
	if err := n.mgr.Close("alice", ids["alice"][1]); err != nil {
		t.Fatal(err)
	}
	bad := w.openProto()
	bad.Rank = 7
	for range 3 {
		if _, err := n.c.OpenSession(context.Background(), bad); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("bad open: %v", err)
		}
	}
	if _, err := open("alice"); err != nil {
		t.Errorf("alice after failed opens: %v", err)
	}
}

// TestCorruptReplica: a flipped byte in this node's replica of a block is caught by the
// block's checksums: the sample comes back right (its bytes from a member that holds a good
// replica), on the raw path and on the transform path; the replica is reported to the
// DataNode once however often it is read, and counted; with no other member holding the block
// the sample is UNAVAILABLE (the reader reads it from HDFS) and no answer names a local path.
// A ReadRange served from the corrupt replica is UNAVAILABLE too.
func TestCorruptReplica(t *testing.T) {
	for _, raw := range []bool{true, false} {
		t.Run(fmt.Sprintf("raw=%v", raw), func(t *testing.T) {
			w := newWorld(t, 8, "")
			w.nodes = []string{"dn-a", "dn-b"}
			peers := &worldPeers{w: w}
			n := startNode(t, w, "dn-a", nodeOpts{peers: peers}) // workers started after the flip
			req := w.openRequest()
			req.RawOnly = raw
			s := n.open(t, req)
			// A sample of rank 0 that dn-a owns at some step (every slot on the raw path).
			var step uint64
			var slot uint32
			var key string
			for st := uint64(0); st < 20 && key == ""; st++ {
				slots, owners, err := dataset.StepOwners(s.plan, s.idx, s.files, s.members, st)
				if err != nil {
					t.Fatal(err)
				}
				for k := s.lo; k < s.hi; k++ {
					if owners[k] == s.self {
						step, slot, key = st, uint32(k), s.idx[slots[k].Source].Sample(slots[k].Index).GetKey()
						break
					}
				}
			}
			if key == "" {
				t.Fatal("dn-a owns no sample of rank 0")
			}
			i, _ := w.ix.Lookup(key)
			smp := w.ix.Sample(i)
			lb := w.locate(w.ix.FilePath(int(smp.GetFile())), "alice")
			ps, err := dataset.Pieces(lb, smp.GetOffset(), smp.GetLength())
			if err != nil {
				t.Fatal(err)
			}
			bad := ps[0].Block.GetBlockId()
			w.flip(bad, ps[0].Offset)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n.mgr.Run(ctx)
			for range 2 { // read twice: reported once
				got, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: step, Slots: []uint32{slot}, MaxWaitMs: 10000})
				if err != nil {
					t.Fatal(err)
				}
				expectSample(t, w, s, got[slot], step, !raw)
				if !raw {
					break // the job's frames are sent once
				}
			}
			if rep := n.host.reported(); !slices.Equal(rep, []string{fmt.Sprintf("%d/%d", bad, 1000+bad)}) {
				t.Errorf("reported %v, want block %d once", rep, bad)
			}
			c := n.mgr.Counters()
			if c.CorruptReplicas != 1 || c.BadBlocksReported != 1 || c.CorruptReads < 1 || c.PeerReads < 1 {
				t.Errorf("counters %+v: want 1 corrupt replica reported, its bytes read from a peer", c)
			}
			if !slices.Contains(peers.asked(), "dn-b:1") {
				t.Errorf("dn-b was not asked for the block: %v", peers.asked())
			}

			// Served to a peer: UNAVAILABLE (the peer tries another member), no path.
			b := ps[0].Block
			_, err = n.c.ReadRange(context.Background(), &pb.ReadRangeRequest{User: "alice", Block: b, Offset: 0, Length: b.GetNumBytes()})
			if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "checksum of chunk") || strings.Contains(err.Error(), w.repDir) {
				t.Errorf("ReadRange of the corrupt replica: %v, want Unavailable naming the checksum and no path", err)
			}
			if rep := n.host.reported(); len(rep) != 1 {
				t.Errorf("reported %v after the ReadRange, want still once", rep)
			}

			// No other DataNode with a datanode-ext in the directory: the sample is
			// UNAVAILABLE, the reader reads it from HDFS.
			alone := startNode(t, w, "dn-a", nodeOpts{run: true, peers: peers, dir: worldDir{"dn-a": {UUID: "dn-a", Addr: "dn-a:1"}}})
			req = w.openRequest()
			req.RawOnly = true
			s2 := alone.open(t, req)
			st2, slot2 := findSlot(t, s2, key)
			got, err := alone.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s2.id, Step: st2, Slots: []uint32{slot2}})
			if err != nil {
				t.Fatal(err)
			}
			if g := got[slot2]; codes.Code(g.GetErrorCode()) != codes.Unavailable || strings.Contains(g.GetError(), w.repDir) {
				t.Errorf("corrupt replica and no other member: %v %q, want Unavailable without a path", codes.Code(g.GetErrorCode()), g.GetError())
			}
		})
	}

	t.Run("not finalized: read elsewhere, not reported", func(t *testing.T) {
		w := newWorld(t, 8, "")
		w.nodes = []string{"dn-a", "dn-b"}
		n := startNode(t, w, "dn-a", nodeOpts{peers: &worldPeers{w: w}})
		n.host.notFinalized = true
		req := w.openRequest()
		req.RawOnly = true
		s := n.open(t, req)
		for id := int64(1); id <= w.nextID; id++ {
			w.flip(id, 0)
		}
		got, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Slots: []uint32{0, 1}})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range got {
			expectSample(t, w, s, g, 0, false)
		}
		if rep := n.host.reported(); len(rep) != 0 {
			t.Errorf("replicas being written reported as corrupt: %v", rep)
		}
	})
}

// TestReadSlots: at most reads.max raw answers are read at once and as many ReadRanges, in
// separate pools (a raw read that waits for a peer's ReadRange cannot be blocked by the
// ranges it serves); a read beyond waits, and gives up with RESOURCE_EXHAUSTED when its caller's
// deadline passes.
func TestReadSlots(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{cfg: Config{MaxReads: 1}})
	req := w.openRequest()
	req.RawOnly = true
	s := n.open(t, req)
	blk := w.locate(w.ix.FilePath(0), "alice").GetBlocks()[0]
	gate := make(chan struct{})
	entered := make(chan struct{}, 8)
	n.host.resolve = func(b *pb.LocatedBlock) {
		entered <- struct{}{}
		<-gate
	}
	// A ReadRange holds the one range slot.
	first := make(chan error, 1)
	go func() {
		_, err := n.mgr.ReadRange(context.Background(), "alice", blk, 0, 10)
		first <- err
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := n.mgr.ReadRange(ctx, "alice", blk, 0, 10)
	cancel()
	if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "waiting for one of 1 concurrent reads (newtricks.datanode.ext.offload.reads.max)") {
		t.Errorf("second ReadRange: %v, want ErrExhausted after its deadline", err)
	}
	// The raw pool is another: a raw answer proceeds (and blocks in the DataNode, as the
	// ReadRange does) while the range slot is taken.
	steps := make(chan error, 2)
	go func() {
		_, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Slots: []uint32{0}})
		steps <- err
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("a raw read waited for the ReadRange's slot")
	}
	// A second raw answer waits for the first.
	calls := n.host.calls.Load()
	go func() {
		_, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Slots: []uint32{1}})
		steps <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if got := n.host.calls.Load(); got != calls {
		t.Errorf("a second raw read reached the DataNode while reads.max=1 was taken")
	}
	n.host.resolve = nil
	close(gate)
	for range 2 {
		if err := <-steps; err != nil {
			t.Error(err)
		}
	}
	if err := <-first; err != nil {
		t.Error(err)
	}
	if c := n.mgr.Counters(); c.ReadWaits < 2 {
		t.Errorf("%d reads waited, want at least 2", c.ReadWaits)
	}
}

// TestMalformedBlockLists: block lists that do not cover their file (from namenode-ext now:
// a node locates a session's files itself) are INVALID_ARGUMENT (they were INTERNAL: the dataset
// package's error was not in the table), at open for the index and per sample for a file.
func TestMalformedBlockLists(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{})
	index := path.Join(w.root, dataset.IndexName)
	n.ns.lie = func(p string, lb *pb.LocatedBlocks) {
		if p == index {
			lb.Blocks = lb.Blocks[1:]
		}
	}
	_, err := n.c.OpenSession(context.Background(), w.openProto())
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "blocks cover") {
		t.Errorf("index blocks with a hole: %v, want InvalidArgument", err)
	}
	n.ns.lie = func(p string, lb *pb.LocatedBlocks) {
		if p != index {
			lb.Blocks = lb.Blocks[:len(lb.Blocks)-1]
		}
	}
	req := w.openProto()
	req.RawOnly = true
	resp, err := n.c.OpenSession(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: resp.GetSessionId(), Slots: []uint32{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		if codes.Code(g.GetErrorCode()) != codes.InvalidArgument {
			t.Errorf("sample %q of a file whose blocks do not cover it: %v %q, want InvalidArgument", g.GetKey(), codes.Code(g.GetErrorCode()), g.GetError())
		}
	}
}

// within runs f and fails the test if it has not returned after d.
func within(t *testing.T, d time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s still running after %v", what, d)
		return nil
	}
}

// TestHugeStepRefused: a step's samples depend on every step before it (the cursor), so the
// first step of a session costs time in proportion to its number. A start step or a GetStep
// step at or beyond step.max is refused at once with INVALID_ARGUMENT, before anything is read
// (before: start_step 2^64-5 of a schedule without max_steps, found reading the handler for
// FuzzOffloadRequests, made OpenSession compute for ever under the Manager's lock, every other
// session of the node frozen and its memory growing; a GetStep of such a step on any open
// session did the same). A far step below the bound is computed outside the lock: the node
// keeps answering meanwhile.
func TestHugeStepRefused(t *testing.T) {
	w := newWorld(t, 8, "")
	w.spec.MaxSteps = 0 // endless
	const limit = 1 << 20
	n := startNode(t, w, "dn-a", nodeOpts{cfg: Config{MaxStep: limit}})
	ctx := context.Background()
	for _, tc := range []struct {
		start   uint64
		sources int
		limit   uint64
	}{
		{limit, 1, limit}, {1<<64 - 5, 1, limit}, {1<<64 - 1, 1, limit},
		// With more sources a step costs more: the bound is lower.
		{limit / 3, 32, limit / 3}, {limit / 17, 256, limit / 17},
	} {
		req := w.openProto()
		req.StartStep = tc.start
		for len(req.Schedule.Sources) < tc.sources {
			src := proto.Clone(req.Schedule.Sources[0]).(*pb.ScheduleSource)
			src.Name = fmt.Sprint("img", len(req.Schedule.Sources))
			req.Schedule.Sources = append(req.Schedule.Sources, src)
			req.Sources = append(req.Sources, req.Sources[0])
		}
		before, located := n.host.calls.Load(), n.ns.calls.Load()
		err := within(t, 10*time.Second, fmt.Sprintf("OpenSession at start step %d", tc.start), func() error {
			_, err := n.c.OpenSession(ctx, req)
			return err
		})
		if want := fmt.Sprintf("start step %d, limit %d for %d sources", tc.start, tc.limit, tc.sources); status.Code(err) != codes.InvalidArgument ||
			!strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "step.max") {
			t.Errorf("OpenSession at start step %d of %d sources: %v, want InvalidArgument saying %q and naming step.max", tc.start, tc.sources, err, want)
		}
		start := tc.start
		if n.host.calls.Load() != before || n.ns.calls.Load() != located {
			t.Errorf("start step %d: the node read or located before refusing", start)
		}
	}
	if c := n.mgr.Counters(); c.Sessions != 0 || c.QueuedJobs != 0 {
		t.Fatalf("refused opens left %d sessions, %d jobs", c.Sessions, c.QueuedJobs)
	}

	open, err := n.c.OpenSession(ctx, w.openProto())
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []uint64{limit, 1<<64 - 5} {
		err := within(t, 10*time.Second, fmt.Sprintf("GetStep of step %d", step), func() error {
			_, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: open.GetSessionId(), Step: step, Slots: []uint32{0}})
			return err
		})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "step.max") {
			t.Errorf("GetStep of step %d: %v, want InvalidArgument naming step.max", step, err)
		}
	}

	// The last step below the bound: a fraction of a second of computing, none of it under the
	// lock.
	start := time.Now()
	var took time.Duration
	done := make(chan error, 1)
	go func() {
		_, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: open.GetSessionId(), Step: limit - 1, Slots: []uint32{0, 1}})
		took = time.Since(start)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	asked := time.Now()
	n.mgr.Counters() // takes the Manager's lock
	waited := time.Since(asked)
	if err := <-done; err != nil {
		t.Fatalf("GetStep of step %d: %v", limit-1, err)
	}
	if took > 200*time.Millisecond && waited > took/2 {
		t.Errorf("Counters waited %v while GetStep computed step %d for %v: computed under the lock", waited, limit-1, took)
	}
	t.Logf("step %d computed in %v; Counters meanwhile in %v", limit-1, took, waited)
}
