package offload

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// TestNextJob: a worker takes the queued job closest to its session's current step (the
// earliest queued among equals), skips and forgets jobs that were canceled or taken, and while
// the finished bytes are at queue.max.bytes takes only jobs of the step a reader waits for.
func TestNextJob(t *testing.T) {
	type qj struct {
		name     string
		cur      uint64 // the job's session's current step
		step     uint64
		state    int
		canceled bool
	}
	for _, tc := range []struct {
		name   string
		jobs   []qj
		full   bool     // the finished bytes are at the cap
		picks  []string // in order, until nextLocked finds nothing
		remain int      // jobs left in the queue afterwards
	}{
		{"closest to its session's step first", []qj{
			{"a12", 10, 12, queued, false}, {"a10", 10, 10, queued, false}, {"a11", 10, 11, queued, false},
			{"b1", 0, 1, queued, false}, {"b0", 0, 0, queued, false},
		}, false, []string{"a10", "b0", "a11", "b1", "a12"}, 0},
		{"canceled and taken jobs are dropped", []qj{
			{"a0", 0, 0, queued, true}, {"a1", 0, 1, running, false}, {"a2", 0, 2, finished, false}, {"a3", 0, 3, queued, false},
		}, false, []string{"a3"}, 0},
		{"full queue: nothing, not even the steps readers wait for", []qj{
			{"a1", 0, 1, queued, false}, {"a0", 0, 0, queued, false}, {"b6", 5, 6, queued, false}, {"b5", 5, 5, queued, false},
		}, true, nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewManager(Config{QueueMaxBytes: 1 << 20}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sessions := map[uint64]*Session{}
			names := map[*job]string{}
			for _, q := range tc.jobs {
				s := sessions[q.cur]
				if s == nil {
					s = &Session{cur: q.cur}
					sessions[q.cur] = s
				}
				j := &job{s: s, step: q.step, state: q.state, canceled: q.canceled}
				names[j] = q.name
				m.jobs = append(m.jobs, j)
			}
			if tc.full {
				m.queued = m.cfg.QueueMaxBytes
			}
			var picks []string
			for j := m.nextLocked(); j != nil; j = m.nextLocked() {
				picks = append(picks, names[j])
			}
			if !slices.Equal(picks, tc.picks) || len(m.jobs) != tc.remain {
				t.Errorf("picked %v leaving %d, want %v leaving %d", picks, len(m.jobs), tc.picks, tc.remain)
			}
		})
	}
}

// steps lists the steps a session has prepared, in order.
func steps(m *Manager, s *Session) []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []uint64
	for st := range s.steps {
		out = append(out, st)
	}
	slices.Sort(out)
	return out
}

// TestPrepareOwnedSteps: a session prepares the steps from the one the reader asks for to
// lookahead beyond it, with a job for each slot of the reader's rank this node owns; asking
// for a step drops the steps before it, and a rewind (a restarted reader) drops the ones too
// far beyond the new step.
func TestPrepareOwnedSteps(t *testing.T) {
	w := newWorld(t, 8, "")
	w.nodes = []string{"dn-a", "dn-b"}
	w.blockSize = 1 << 20 // a block per file, every other file on dn-b
	w.holders = func(id int64) []string { return w.nodes[id%2 : id%2+1] }
	n := startNode(t, w, "dn-a", nodeOpts{peers: &worldPeers{w: w}})
	req := w.openRequest()
	req.Lookahead = 2
	s := n.open(t, req)
	if got := steps(n.mgr, s); !slices.Equal(got, []uint64{0, 1, 2}) {
		t.Fatalf("prepared steps %v, want 0..2", got)
	}
	owned := 0
	for _, st := range steps(n.mgr, s) {
		_, owners, err := dataset.StepOwners(s.plan, s.idx, s.files, s.members, st)
		if err != nil {
			t.Fatal(err)
		}
		var want, got []int
		for k := s.lo; k < s.hi; k++ {
			if owners[k] == s.self {
				want = append(want, k)
			}
		}
		n.mgr.mu.Lock()
		for k, j := range s.steps[st] {
			if j.slot != k || j.step != st || j.state != queued {
				t.Errorf("step %d: job %+v under slot %d", st, j, k)
			}
			got = append(got, k)
		}
		n.mgr.mu.Unlock()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("step %d: jobs for slots %v, want the rank's slots this node owns %v (owners %v)", st, got, want, owners)
		}
		owned += len(want)
	}
	if owned == 0 || owned == 3*(s.hi-s.lo) {
		t.Errorf("this node owns %d of the %d slots: the case does not show ownership", owned, 3*(s.hi-s.lo))
	}
	if c := n.mgr.Counters(); c.QueuedJobs != owned {
		t.Errorf("%d jobs queued, want %d", c.QueuedJobs, owned)
	}

	for _, tc := range []struct {
		ask  uint64
		want []uint64
		kept []uint64 // steps whose jobs must be the ones prepared before
	}{
		{5, []uint64{5, 6, 7}, nil}, // the steps before 5 are dropped
		{6, []uint64{6, 7, 8}, []uint64{6, 7}},
		{5, []uint64{5, 6, 7}, []uint64{6, 7}}, // a rewind drops what lies beyond its lookahead only
		{1, []uint64{1, 2, 3}, nil},
	} {
		n.mgr.mu.Lock()
		before := map[uint64]map[int]*job{}
		for _, st := range tc.kept {
			before[st] = s.steps[st]
		}
		n.mgr.mu.Unlock()
		if _, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: tc.ask}); err != nil {
			t.Fatal(err)
		}
		if got := steps(n.mgr, s); !slices.Equal(got, tc.want) {
			t.Errorf("after asking for step %d: prepared %v, want %v", tc.ask, got, tc.want)
		}
		n.mgr.mu.Lock()
		for st, js := range before {
			if reflect.ValueOf(js).UnsafePointer() != reflect.ValueOf(s.steps[st]).UnsafePointer() {
				t.Errorf("asking for step %d prepared step %d anew", tc.ask, st)
			}
		}
		n.mgr.mu.Unlock()
	}
}

// TestWorkersStopAtTheCap: with the finished bytes at queue.max.bytes, the workers transform
// nothing, not even the step the reader waits for (the cap bounds every step's memory): that
// step is answered raw once max_wait_ms passes, and every job stays queued.
func TestWorkersStopAtTheCap(t *testing.T) {
	w := newWorld(t, 8, "")
	n := startNode(t, w, "dn-a", nodeOpts{})
	n.mgr.queued = n.mgr.cfg.QueueMaxBytes // as if other sessions held the queue full
	s := n.open(t, w.openRequest())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n.mgr.Run(ctx)
	got, err := n.getStep(t, &pb.GetStepRequest{User: "alice", SessionId: s.id, Step: 0, Slots: []uint32{0, 1}, MaxWaitMs: 300})
	if err != nil {
		t.Fatal(err)
	}
	for _, smp := range got {
		expectSample(t, w, s, smp, 0, false)
	}
	n.mgr.mu.Lock()
	var running []string
	for st := uint64(0); st <= 4; st++ {
		for k, j := range s.steps[st] {
			if j.state != queued {
				running = append(running, fmt.Sprintf("%d/%d:%d", st, k, j.state))
			}
		}
	}
	n.mgr.mu.Unlock()
	if len(running) > 0 {
		t.Errorf("jobs taken while the queue was full: %s", strings.Join(running, " "))
	}
	if c := n.mgr.Counters(); c.QueuedJobs != 8 || c.Raw != 2 || c.Transformed != 0 {
		t.Errorf("%d jobs queued, %d raw, %d transformed; want steps 1..4's 8 left alone and step 0 raw", c.QueuedJobs, c.Raw, c.Transformed)
	}
}
