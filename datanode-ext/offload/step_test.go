package offload

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// expectSample checks one answered sample against the session's plan and the local bytes:
// transformed (the reader's own frames) or raw (one raw frame holding the encoded sample).
func expectSample(t *testing.T, w *world, s *Session, got *pb.OffloadSample, step uint64, transformed bool) {
	t.Helper()
	slots, err := s.plan.Step(step)
	if err != nil {
		t.Fatal(err)
	}
	sl := slots[got.GetSlot()]
	key := s.idx[sl.Source].Sample(sl.Index).GetKey()
	if got.GetStep() != step || got.GetSource() != uint32(sl.Source) || got.GetKey() != key || got.GetEpoch() != sl.Epoch {
		t.Fatalf("step %d slot %d answered as step %d source %d %q epoch %d, want source %d %q epoch %d", step, got.GetSlot(),
			got.GetStep(), got.GetSource(), got.GetKey(), got.GetEpoch(), sl.Source, key, sl.Epoch)
	}
	if got.GetErrorCode() != 0 {
		t.Fatalf("sample %q failed: %v %s", key, codes.Code(got.GetErrorCode()), got.GetError())
	}
	f, rest, err := frame.Parse(got.GetFrames())
	if err != nil {
		t.Fatalf("sample %q: %v", key, err)
	}
	switch {
	case transformed && !bytes.Equal(got.GetFrames(), w.localFrames(key, sl.Epoch)):
		t.Errorf("sample %q: the node's %d bytes differ from the reader's own transform", key, len(got.GetFrames()))
	case !transformed && (f.Kind != frame.KindRaw || len(rest) != 0 || !bytes.Equal(f.Payload, w.sampleBytes(key))):
		t.Errorf("sample %q: want one raw frame of its %d encoded bytes, got kind %d with %d bytes (%d left)", key,
			len(w.sampleBytes(key)), f.Kind, len(f.Payload), len(rest))
	}
}

// TestRawWhileSheddingTransformedAfter: a shedding node answers raw at once, without waiting
// for transforms; once it stops shedding, its workers transform again and it answers with the
// bytes the reader would have made.
func TestRawWhileSheddingTransformedAfter(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{run: true})
	n.shed(t, true)
	s := n.open(t, w.openRequest())
	start := time.Now()
	got, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: 0, Slots: []uint32{0, 1}, MaxWaitMs: 10000})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("a shedding node took %v to answer raw", took)
	}
	if len(got) != 2 {
		t.Fatalf("%d samples, want 2", len(got))
	}
	for _, smp := range got {
		expectSample(t, w, s, smp, 0, false)
	}
	if c := n.mgr.Counters(); c.Raw != 2 || c.Transformed != 0 || c.QueuedJobs != 8 {
		t.Errorf("while shedding: %+v, want 2 raw, nothing transformed, steps 1..4 queued", c)
	}

	n.shed(t, false)
	got, err = n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: 1, Slots: []uint32{1, 0}, MaxWaitMs: 10000})
	if err != nil {
		t.Fatal(err)
	}
	for _, smp := range got {
		expectSample(t, w, s, smp, 1, true)
	}
	c := n.mgr.Counters()
	if c.Raw != 2 || c.Transformed != 2 || c.Errors != 0 {
		t.Errorf("after shedding: %+v, want 2 raw, 2 transformed", c)
	}
	var sent int64
	for _, smp := range got {
		sent += int64(len(smp.GetFrames()))
	}
	if c.SentBytes <= sent {
		t.Errorf("sent bytes %d, want the raw ones and %d", c.SentBytes, sent)
	}
}

// TestWaitForTransforms: a node waits for a job that is not finished up to the request's
// max_wait_ms (capped by max.wait.ms) and then answers raw; a shedding node does not wait even
// for a job that is running. No worker runs here: the jobs never finish.
func TestWaitForTransforms(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{cfg: Config{MaxWait: time.Second}})
	s := n.open(t, w.openRequest())
	for _, tc := range []struct {
		name     string
		step     uint64
		waitMs   uint32
		shed     bool
		min, max time.Duration
	}{
		{"request's wait", 0, 100, false, 100 * time.Millisecond, 800 * time.Millisecond},
		{"node's cap", 1, 60000, false, time.Second, 5 * time.Second},
		{"node's default", 2, 0, false, time.Second, 5 * time.Second},
		{"shedding", 3, 60000, true, 0, 700 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n.mgr.mu.Lock()
			for _, j := range s.steps[tc.step] {
				j.state = running // taken by a worker that is slow to finish
			}
			n.mgr.mu.Unlock()
			if tc.shed {
				n.shed(t, true)
			}
			start := time.Now()
			got, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: tc.step, Slots: []uint32{0, 1}, MaxWaitMs: tc.waitMs})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if took < tc.min || took > tc.max {
				t.Errorf("answered after %v, want %v..%v", took, tc.min, tc.max)
			}
			for _, smp := range got {
				expectSample(t, w, s, smp, tc.step, false)
			}
		})
	}
}

// TestSampleErrors: a sample that fails is answered with its code and text, the
// others of the step are not affected, and the session goes on.
func TestSampleErrors(t *testing.T) {
	t.Run("corrupt media", func(t *testing.T) {
		w := newWorld(t, 8, "s03")
		n := startNode(t, w, "dn-a", nodeOpts{run: true})
		s := n.open(t, w.openRequest())
		found := false
		for step := uint64(0); step < 20 && !found; step++ {
			got, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: step, Slots: []uint32{0, 1}, MaxWaitMs: 10000})
			if err != nil {
				t.Fatal(err)
			}
			for _, smp := range got {
				if smp.GetKey() != "s03" {
					expectSample(t, w, s, smp, step, true)
					continue
				}
				found = true
				if codes.Code(smp.GetErrorCode()) != codes.InvalidArgument || smp.GetError() == "" || len(smp.GetFrames()) != 0 {
					t.Errorf("corrupt sample: code %v %q, %d bytes; want InvalidArgument, a message and no frames",
						codes.Code(smp.GetErrorCode()), smp.GetError(), len(smp.GetFrames()))
				}
			}
		}
		if !found {
			t.Fatal("the corrupt sample is in none of rank 0's 20 steps")
		}
		if c := n.mgr.Counters(); c.Errors != 1 || c.ErrorsByCode[codes.InvalidArgument] != 1 {
			t.Errorf("counted %d errors, by code %v; want 1 InvalidArgument", c.Errors, c.ErrorsByCode)
		}
	})

	for _, tc := range []struct {
		name string
		// spoil breaks the world, before the session opens (the index stays readable) or
		// after.
		spoil     func(w *world, req *OpenRequest)
		afterOpen bool
		code      codes.Code
		msg       string
	}{
		{"tokens the DataNode refuses on the files", func(w *world, req *OpenRequest) {
			w.badTokens = true // the index's are good
		}, false, codes.PermissionDenied, "block token not valid for alice"},
		{"replica gone", func(w *world, req *OpenRequest) {
			for _, p := range w.paths {
				os.Remove(p)
			}
		}, true, codes.Unavailable, "open replica"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 8, "")
			n := startNode(t, w, "dn-a", nodeOpts{})
			req := w.openRequest()
			req.RawOnly = true
			if !tc.afterOpen {
				tc.spoil(w, &req)
			}
			s := n.open(t, req)
			if tc.afterOpen {
				tc.spoil(w, &req)
			}
			got, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Slots: []uint32{0, 1}})
			if err != nil {
				t.Fatalf("the step failed as a whole: %v", err)
			}
			if len(got) != 2 {
				t.Fatalf("%d samples, want 2", len(got))
			}
			for _, smp := range got {
				if codes.Code(smp.GetErrorCode()) != tc.code || !strings.Contains(smp.GetError(), tc.msg) ||
					!strings.Contains(smp.GetError(), `sample "`+smp.GetKey()+`"`) || len(smp.GetFrames()) != 0 {
					t.Errorf("sample %q: %v %q, want %v naming the sample and saying %q, no frames", smp.GetKey(),
						codes.Code(smp.GetErrorCode()), smp.GetError(), tc.code, tc.msg)
				}
			}
			if c := n.mgr.Counters(); c.Errors != 2 || c.ErrorsByCode[tc.code] != 2 {
				t.Errorf("errors %d, by code %v; want 2 %v", c.Errors, c.ErrorsByCode, tc.code)
			}
		})
	}
}

// TestBatchSendsWhatIsReady: GetStepBatch sends a step whose samples are all transformed as one
// message, and raw samples one by one as they are read.
func TestBatchSendsWhatIsReady(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{run: true})
	s := n.open(t, w.openRequest())
	batches := func(s *Session, step uint64) [][]*pb.OffloadSample {
		t.Helper()
		st, err := n.c.GetStepBatch(context.Background(), &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: step, Slots: []uint32{0, 1}, MaxWaitMs: 10000})
		if err != nil {
			t.Fatal(err)
		}
		var out [][]*pb.OffloadSample
		for {
			b, err := st.Recv()
			if err != nil {
				return out
			}
			for _, smp := range b.GetSamples() {
				expectSample(t, w, s, smp, step, !n.gov.Shedding())
			}
			out = append(out, b.GetSamples())
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n.mgr.mu.Lock()
		ready := len(s.steps[1]) == 2
		for _, j := range s.steps[1] {
			ready = ready && j.state == finished
		}
		n.mgr.mu.Unlock()
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("step 1 not transformed within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := batches(s, 1); len(got) != 1 || len(got[0]) != 2 {
		t.Errorf("a ready step came in %d messages, want 1 of 2 samples", len(got))
	}

	n.shed(t, true)
	if got := batches(n.open(t, w.openRequest()), 0); len(got) != 2 || len(got[0]) != 1 || len(got[1]) != 1 {
		t.Errorf("raw samples came in %d messages, want 2 of 1", len(got))
	}
}
