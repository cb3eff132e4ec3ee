package offload

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"

	"github.com/newtricks/newtricks/dataset"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/xformgraph"
)

// Governor says whether the node sheds transforms (package governor).
type Governor interface {
	Shedding() bool
	Changed() <-chan struct{}
}

// Counters are totals since start and the current state of the queue.
type Counters struct {
	// Samples answered to readers: transformed (tensors), raw, failed (by code).
	Transformed, Raw, Errors int64
	ErrorsByCode             map[codes.Code]int64
	// SentBytes are the frame bytes of every answered sample.
	SentBytes int64
	// QueuedBytes are transformed bytes held ready; QueuedJobs samples waiting for a worker.
	QueuedBytes int64
	QueuedJobs  int
	Sessions    int
	// Sessions opened (RawOnly of them raw-only), and of those the ones whose reader named
	// another determinism domain.
	SessionsOpened, SessionsRawOnly, DomainMismatches int64
	// Pieces of samples this node read from peers (ReadRange on another member), failed
	// ones, and their bytes; ranges this node served to peers, and their bytes.
	PeerReads, PeerReadErrors, PeerReadBytes int64
	RangesServed, RangeBytesServed           int64
}

// Manager holds the sessions of one node and runs the transform workers.
type Manager struct {
	cfg   Config
	host  Host
	peers Peers
	gov   Governor
	self  func() string
	log   hclog.Logger
	// domain is what the node reports; restamp is set when it is not this process's own.
	domain      string
	restamp     bool
	transformed func(time.Duration)

	mu       sync.Mutex
	wake     *sync.Cond
	sessions map[string]*Session
	jobs     []*job // queued jobs of all sessions
	queued   int64  // bytes of finished, unsent frames
	ctr      Counters
}

// Options are the Manager's collaborators.
type Options struct {
	Host  Host
	Peers Peers
	Gov   Governor
	// Self returns this DataNode's UUID ("" until known).
	Self func() string
	Log  hclog.Logger
	// Domain is the determinism domain the node reports and writes in its frames (default:
	// xformgraph.Domain()). Only tests set another one, to play a node built differently.
	Domain string
	// Transformed, if set, is told how long each sample took to read and transform.
	Transformed func(time.Duration)
}

// NewManager returns a manager; Run starts its workers.
func NewManager(cfg Config, o Options) (*Manager, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	m := &Manager{cfg: cfg, host: o.Host, peers: o.Peers, gov: o.Gov, self: o.Self, log: o.Log, sessions: map[string]*Session{},
		domain: o.Domain, transformed: o.Transformed}
	if m.domain == "" {
		m.domain = xformgraph.Domain().String()
	}
	m.restamp = m.domain != xformgraph.Domain().String()
	m.ctr.ErrorsByCode = map[codes.Code]int64{}
	m.wake = sync.NewCond(&m.mu)
	return m, nil
}

// Domain is the determinism domain this node reports (xformgraph.Domain unless a test set
// Options.Domain).
func (m *Manager) Domain() string { return m.domain }

// Config returns the effective configuration.
func (m *Manager) Config() Config { return m.cfg }

// Run starts the workers and the idle-session reaper; they stop when ctx ends.
func (m *Manager) Run(ctx context.Context) {
	for i := 0; i < m.cfg.Workers; i++ {
		go m.worker(ctx)
	}
	go func() { // wake the workers when shedding changes or ctx ends
		for {
			select {
			case <-ctx.Done():
				m.mu.Lock()
				m.wake.Broadcast()
				m.mu.Unlock()
				return
			case <-m.gov.Changed():
			case <-time.After(time.Second):
			}
			m.mu.Lock()
			m.reapLocked()
			m.wake.Broadcast()
			m.mu.Unlock()
		}
	}()
}

// Open validates and opens a session.
func (m *Manager) Open(ctx context.Context, user string, req *pb.OpenSessionRequest) (*pb.OpenSessionResponse, error) {
	m.mu.Lock()
	n := len(m.sessions)
	m.mu.Unlock()
	if n >= m.cfg.MaxSessions {
		return nil, fmt.Errorf("%w: %d sessions open, limit %d", ErrExhausted, n, m.cfg.MaxSessions)
	}
	s, err := m.open(ctx, user, req)
	if err != nil {
		return nil, err
	}
	match := m.domain == req.GetDeterminismDomain()
	m.mu.Lock()
	m.sessions[s.id] = s
	m.ctr.Sessions = len(m.sessions)
	m.ctr.SessionsOpened++
	if s.rawOnly {
		m.ctr.SessionsRawOnly++
	}
	if !match {
		m.ctr.DomainMismatches++
	}
	m.prepareLocked(s)
	m.mu.Unlock()
	m.log.Info("offload session opened", "session", s.id, "user", user, "rank", req.GetRank(),
		"start_step", req.GetStartStep(), "members", len(s.members), "raw_only", s.rawOnly, "domain_match", match)
	if !match && !s.rawOnly {
		// The reader learns it from the answer and reopens raw-only (docs/offload.md).
		m.log.Warn("offload session from a reader of another determinism domain", "session", s.id,
			"reader_domain", req.GetDeterminismDomain(), "node_domain", m.domain)
	}
	return &pb.OpenSessionResponse{SessionId: s.id, DatanodeUuid: m.self(), DeterminismDomain: m.domain,
		DomainMatch: match, Lookahead: uint32(s.ahead), Shedding: m.gov.Shedding()}, nil
}

func (m *Manager) session(user, id string) (*Session, error) {
	s, ok := m.sessions[id]
	if !ok {
		return nil, fmt.Errorf("%w: session %q (expired, closed, or the node restarted: open a new one)", ErrNotFound, id)
	}
	if s.user != user {
		return nil, fmt.Errorf("%w: session %q belongs to another user", ErrPermission, id)
	}
	s.lastUsed = time.Now()
	return s, nil
}

// Close ends a session and drops its queued work.
func (m *Manager) Close(user, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.session(user, id)
	if err != nil {
		return err
	}
	m.dropLocked(s)
	return nil
}

func (m *Manager) dropLocked(s *Session) {
	s.closed = true
	for step := range s.steps {
		m.dropStepLocked(s, step)
	}
	delete(m.sessions, s.id)
	m.ctr.Sessions = len(m.sessions)
}

func (m *Manager) reapLocked() {
	for _, s := range m.sessions {
		if time.Since(s.lastUsed) > m.cfg.Idle {
			m.log.Info("offload session expired", "session", s.id, "user", s.user)
			m.dropLocked(s)
		}
	}
}

// dropStepLocked forgets a step: queued jobs are canceled, finished frames released.
func (m *Manager) dropStepLocked(s *Session, step uint64) {
	for _, j := range s.steps[step] {
		j.canceled = true
		if j.state == finished {
			m.queued -= int64(len(j.frames))
			j.frames = nil
		}
	}
	delete(s.steps, step)
}

// prepareLocked creates the jobs of steps cur..cur+ahead that are not there yet.
func (m *Manager) prepareLocked(s *Session) {
	if s.rawOnly {
		return
	}
	for step := s.cur; step <= s.cur+uint64(s.ahead); step++ {
		if _, ok := s.steps[step]; ok {
			continue
		}
		if s.plan.End(step) {
			break
		}
		slots, owners, err := dataset.StepOwners(s.plan, s.idx, s.files, s.members, step)
		if err != nil {
			break
		}
		js := map[int]*job{}
		for k := s.lo; k < s.hi; k++ {
			if owners[k] != s.self {
				continue
			}
			j := &job{s: s, step: step, slot: k, sl: slots[k], done: make(chan struct{})}
			js[k] = j
			m.jobs = append(m.jobs, j)
		}
		s.steps[step] = js
	}
	m.wake.Broadcast()
}

// next picks the queued job closest to its session's current step; jobs beyond the step a
// reader waits for are taken only while the queue is under its byte cap.
func (m *Manager) nextLocked() *job {
	best, bi := (*job)(nil), -1
	keep := m.jobs[:0]
	for _, j := range m.jobs {
		if j.canceled || j.state != queued {
			continue
		}
		keep = append(keep, j)
	}
	m.jobs = keep
	for i, j := range m.jobs {
		if j.step > j.s.cur && m.queued >= m.cfg.QueueMaxBytes {
			continue
		}
		if best == nil || j.step-j.s.cur < best.step-best.s.cur {
			best, bi = j, i
		}
	}
	if best != nil {
		m.jobs = append(m.jobs[:bi], m.jobs[bi+1:]...)
	}
	return best
}

func (m *Manager) worker(ctx context.Context) {
	// The worker keeps its own OS thread at a lower priority for its whole life (cgo FFmpeg
	// calls run on it too), so the DataNode's threads win the CPU when both want it.
	runtime.LockOSThread()
	if m.cfg.Nice > 0 {
		if err := unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), m.cfg.Nice); err != nil {
			m.log.Warn("cannot lower the transform worker's priority", "error", err)
		}
	}
	for {
		m.mu.Lock()
		var j *job
		for ctx.Err() == nil {
			if !m.gov.Shedding() {
				if j = m.nextLocked(); j != nil {
					break
				}
			}
			m.wake.Wait()
		}
		if j == nil {
			m.mu.Unlock()
			return
		}
		j.state = running
		m.mu.Unlock()

		start := time.Now()
		frames, err := j.s.transform(ctx, j.sl)
		took := time.Since(start)
		if err == nil && m.restamp {
			frames, err = restamp(frames, m.domain)
		}
		if m.transformed != nil {
			m.transformed(took)
		}
		m.mu.Lock()
		j.state, j.frames, j.err = finished, frames, err
		j.nodeMicros = uint32(min(took.Microseconds(), 1<<32-1))
		if j.canceled {
			j.frames = nil
		} else {
			m.queued += int64(len(frames))
		}
		close(j.done)
		m.wake.Broadcast()
		m.mu.Unlock()
	}
}

// GetStep answers one step: for every requested slot, the transformed frames if a worker made
// them in time, else the raw sample bytes. Asking for step s releases the steps before it and
// schedules s+1..s+lookahead. send gets one sample per call (GetStep's stream).
func (m *Manager) GetStep(ctx context.Context, user string, req *pb.GetStepRequest, send func(*pb.OffloadSample) error) error {
	return m.getStep(ctx, user, req, func(b []*pb.OffloadSample) error {
		for _, x := range b {
			if err := send(x); err != nil {
				return err
			}
		}
		return nil
	}, false)
}

// GetStepBatch answers one step as GetStep does, with the samples grouped: send gets every
// answered sample the node holds whenever it is about to wait (for a transform that is not
// finished, or to read a sample's raw bytes) and at the end. A step whose samples are all
// transformed already is one call of send.
func (m *Manager) GetStepBatch(ctx context.Context, user string, req *pb.GetStepRequest, send func([]*pb.OffloadSample) error) error {
	return m.getStep(ctx, user, req, send, true)
}

func (m *Manager) getStep(ctx context.Context, user string, req *pb.GetStepRequest, send func([]*pb.OffloadSample) error, batch bool) error {
	wait := m.cfg.MaxWait
	if w := time.Duration(req.GetMaxWaitMs()) * time.Millisecond; w > 0 && w < wait {
		wait = w
	}
	m.mu.Lock()
	s, err := m.session(user, req.GetSessionId())
	if err != nil {
		m.mu.Unlock()
		return err
	}
	step := req.GetStep()
	if s.plan.End(step) {
		m.mu.Unlock()
		return fmt.Errorf("%w: step %d is past the schedule", ErrInvalid, step)
	}
	if len(req.GetSlots()) > s.hi-s.lo {
		m.mu.Unlock()
		return fmt.Errorf("%w: %d slots requested, the rank has %d", ErrInvalid, len(req.GetSlots()), s.hi-s.lo)
	}
	for _, k := range req.GetSlots() {
		if int(k) < s.lo || int(k) >= s.hi {
			m.mu.Unlock()
			return fmt.Errorf("%w: slot %d is not in the rank's range [%d, %d)", ErrInvalid, k, s.lo, s.hi)
		}
	}
	for st := range s.steps {
		if st < step {
			m.dropStepLocked(s, st)
		}
	}
	if step > s.cur || step < s.cur { // a rewind (reader restarted) reschedules too
		for st := range s.steps {
			if st > step+uint64(s.ahead) {
				m.dropStepLocked(s, st)
			}
		}
		s.cur = step
	}
	m.prepareLocked(s)
	js := s.steps[step]
	m.mu.Unlock()

	slots, err := s.plan.Step(step)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	expired := false
	var held []*pb.OffloadSample // answered, not sent yet (batch)
	flush := func() error {
		if len(held) == 0 {
			return nil
		}
		err := send(held)
		held = nil
		return err
	}
	for _, k := range req.GetSlots() {
		sl := slots[k]
		smp := s.idx[sl.Source].Sample(sl.Index)
		out := &pb.OffloadSample{Step: step, Slot: k, Source: uint32(sl.Source), Key: smp.GetKey(), Epoch: sl.Epoch}
		j := js[int(k)]
		m.mu.Lock()
		ready := j != nil && j.state == finished && !j.canceled
		m.mu.Unlock()
		if !ready {
			// About to wait for a transform or to read raw bytes: send what is ready first.
			if err := flush(); err != nil {
				return err
			}
		}
		if j != nil && !expired && !ready {
			j = m.await(ctx, j, deadline.C, &expired)
		}
		m.mu.Lock()
		if j != nil && j.state == finished && !j.canceled {
			out.Frames, out.NodeMicros = j.frames, j.nodeMicros
			if j.err != nil {
				out.ErrorCode, out.Error = int32(sampleCode(j.err)), j.err.Error()
				m.countErrorLocked(j.err)
			} else {
				m.ctr.Transformed++
				m.ctr.SentBytes += int64(len(j.frames))
			}
			m.queued -= int64(len(j.frames))
			j.frames = nil
			j.canceled = true
			m.mu.Unlock()
		} else {
			if j != nil {
				j.canceled = true // a queued job is dropped; a running one finishes unused
			}
			m.mu.Unlock()
			start := time.Now()
			frames, err := s.raw(ctx, sl)
			if err == nil && m.restamp {
				frames, err = restamp(frames, m.domain)
			}
			out.NodeMicros = uint32(time.Since(start).Microseconds())
			m.mu.Lock()
			if err != nil {
				out.ErrorCode, out.Error = int32(sampleCode(err)), err.Error()
				m.countErrorLocked(err)
			} else {
				out.Frames = frames
				m.ctr.Raw++
				m.ctr.SentBytes += int64(len(frames))
			}
			m.mu.Unlock()
		}
		held = append(held, out)
		if !batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// await waits for a job until it finishes, the deadline passes, or the node sheds. A shedding
// node does not wait for a job that is running either: its worker runs at low priority on a
// loaded CPU and may take many times its usual time, while the reader transforms the raw
// bytes at once (the job finishes unused).
func (m *Manager) await(ctx context.Context, j *job, deadline <-chan time.Time, expired *bool) *job {
	for {
		m.mu.Lock()
		st := j.state
		m.mu.Unlock()
		if st != finished && m.gov.Shedding() {
			return j
		}
		select {
		case <-j.done:
			return j
		case <-deadline:
			*expired = true
			return j
		case <-ctx.Done():
			return j
		case <-m.gov.Changed():
		}
	}
}

// ReadRange serves a peer (or a reader) one range of a local replica, after the DataNode
// verified the token for the user.
func (m *Manager) ReadRange(ctx context.Context, user string, b *pb.LocatedBlock, off, n int64) ([]byte, error) {
	if b == nil || b.GetBlockId() == 0 || b.GetBlockPoolId() == "" {
		return nil, fmt.Errorf("%w: block pool id and block id are required", ErrInvalid)
	}
	if n < 0 || n > MaxRangeBytes || off < 0 {
		return nil, fmt.Errorf("%w: range [%d, +%d): length must be in [0, %d]", ErrInvalid, off, n, MaxRangeBytes)
	}
	data, err := ReadLocal(ctx, m.host, user, b, off, n)
	if err == nil {
		m.mu.Lock()
		m.ctr.RangesServed++
		m.ctr.RangeBytesServed += int64(len(data))
		m.mu.Unlock()
	}
	return data, err
}

func (m *Manager) countErrorLocked(err error) {
	m.ctr.Errors++
	m.ctr.ErrorsByCode[sampleCode(err)]++
}

// peerRead counts one read of a piece from a peer.
func (m *Manager) peerRead(n int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ctr.PeerReads++
	if err != nil {
		m.ctr.PeerReadErrors++
		return
	}
	m.ctr.PeerReadBytes += int64(n)
}

// SampleCodes are the codes a per-sample error can carry (Counters.ErrorsByCode).
var SampleCodes = []codes.Code{codes.InvalidArgument, codes.PermissionDenied, codes.ResourceExhausted,
	codes.Unimplemented, codes.Unavailable, codes.Internal}

// Counters returns totals and the current queue.
func (m *Manager) Counters() Counters {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.ctr
	c.QueuedBytes = m.queued
	c.ErrorsByCode = make(map[codes.Code]int64, len(m.ctr.ErrorsByCode))
	for k, v := range m.ctr.ErrorsByCode {
		c.ErrorsByCode[k] = v
	}
	for _, j := range m.jobs {
		if !j.canceled && j.state == queued {
			c.QueuedJobs++
		}
	}
	return c
}
