package offload

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"

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
	// CorruptReads are local reads whose replica failed its checksums; CorruptReplicas the
	// distinct replicas found so (each reported once); BadBlocksReported the reports the
	// DataNode accepted, BadBlockReportErrors those it did not.
	CorruptReads, CorruptReplicas, BadBlocksReported, BadBlockReportErrors int64
	// ReadWaits are raw reads and ReadRanges that waited for a slot (Config.MaxReads).
	ReadWaits int64
	// Panics are failures recovered from a panic (a sample or a session failed, the process
	// did not).
	Panics int64
	// SessionsRefused are OpenSession calls refused at a session cap (node or user).
	SessionsRefused int64
}

// Manager holds the sessions of one node and runs the transform workers.
type Manager struct {
	cfg   Config
	host  Host
	peers Peers
	ns    Namespace
	dir   Directory
	gov   Governor
	self  func() string
	log   hclog.Logger
	// domain is what the node reports; restamp is set when it is not this process's own.
	domain      string
	restamp     bool
	transformed func(time.Duration)

	// rawSlots and rangeSlots bound the raw answers and the ReadRanges being read at once
	// (Config.MaxReads each). Two pools: a raw read may wait for a peer's ReadRange, which
	// never waits for anything but its own disk, so the nodes cannot wait for each other.
	rawSlots, rangeSlots chan struct{}
	panics               atomic.Int64

	mu       sync.Mutex
	wake     *sync.Cond
	sessions map[string]*Session
	// opening counts the sessions being opened (reserved against the caps before the slow
	// open), perUser the open and opening sessions of each user.
	opening  int
	perUser  map[string]int
	jobs     []*job // queued jobs of all sessions
	queued   int64  // bytes of finished, unsent frames
	reported map[replicaKey]struct{}
	ctr      Counters
}

// Options are the Manager's collaborators.
type Options struct {
	// Host is the DataNode's token-checked access to its replicas.
	Host Host
	// Peers read the pieces of samples stored on other DataNodes.
	Peers Peers
	// Namespace locates a session's index and files as its user (namenode-ext); nil refuses
	// every session (FAILED_PRECONDITION: no namenode-ext configured).
	Namespace Namespace
	// Directory lists where other DataNodes' datanode-ext listen (namenode-ext); nil reads
	// only local replicas.
	Directory Directory
	// Gov says when to shed transforms.
	Gov Governor
	// Self returns this DataNode's UUID ("" until known).
	Self func() string
	// Log may be nil (nothing is logged).
	Log hclog.Logger
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
	m := &Manager{cfg: cfg, host: o.Host, peers: o.Peers, ns: o.Namespace, dir: o.Directory, gov: o.Gov, self: o.Self, log: o.Log, sessions: map[string]*Session{},
		domain: o.Domain, transformed: o.Transformed, perUser: map[string]int{}, reported: map[replicaKey]struct{}{},
		rawSlots: make(chan struct{}, cfg.MaxReads), rangeSlots: make(chan struct{}, cfg.MaxReads)}
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

// countErrorLocked counts one sample answered with an error.
func (m *Manager) countErrorLocked(err error) {
	m.ctr.Errors++
	m.ctr.ErrorsByCode[sampleCode(err)]++
}

// Counters returns totals and the current queue.
func (m *Manager) Counters() Counters {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.ctr
	c.QueuedBytes = m.queued
	c.Panics = m.panics.Load()
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
