package hotspot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Hint states.
const (
	StatePreparing = "PREPARING"
	StateReady     = "READY"
	StateRestoring = "RESTORING"
	StateFinished  = "FINISHED"
	StateCancelled = "CANCELLED"
)

// Per-file results, once a hint let go of the file.
const (
	ResultRestored   = "restored"
	ResultExternal   = "external"
	ResultGone       = "gone"
	ResultNotHeld    = "not_held"
	ResultUnreadable = "unreadable"
)

// maxSkippedListed bounds the skipped entries of one answer; the rest are only counted.
const maxSkippedListed = 100

// batchSize bounds one batched host call (SetReplications, InspectFiles). A write batch holds
// writeMu for one round trip, so restores and other hints interleave with a large raise.
const batchSize = 512

// maxInspectPerTick bounds the files whose readiness one tick looks at; the rest wait for the
// next tick.
const maxInspectPerTick = 8192

// keepFinished is how many finished hints Status can still report.
const keepFinished = 256

// Manager plans, applies, tracks and restores hints. It is safe for concurrent use.
//
// Locking: mu guards the in-memory state and is never held across a host call. writeMu
// serialises the writes (factors, markers, the registry, the limits) one batch at a time: each
// batch is computed from the state when it gets the lock, so two hints changing one file never
// interleave, and a 10,000-file raise lets restores and ticks in between its batches. Readiness
// polling only reads and takes neither lock across its calls.
type Manager struct {
	cfg     Config
	host    Host
	log     hclog.Logger
	metrics *metrics
	now     func() time.Time

	writeMu sync.Mutex

	mu         sync.Mutex // guards the fields below
	hints      map[string]*hint
	files      map[int64]*fileState
	finished   []*hint
	creating   int            // hints being created or dry runs under way (counted against MaxActiveHints)
	creatingBy map[string]int // the same per user (counted against MaxActiveHintsPerUser)
	recovered  bool
	superuser  string
	live       int
	problems   []string
	paths      map[string]int64 // held files by last known path, for reactive mode
	// boost state, changed under writeMu
	boosted    map[string]string // key -> value before boosting; nil when not boosted
	boostSince time.Time
	// balanced reads: the paths last pushed, and whether the host knows the call
	balancedKey string
	balancedOff bool

	reactive *reactive
	implicit chan string
}

// hint is the in-memory state of one active or recently finished hint.
type hint struct {
	rec          record
	files        []*hintFile
	state        string
	readyAt      time.Time
	notes        []string
	boostExpired bool // the limits were released before it was ready; not boosted again
	raising      bool // Create is still raising its files: not ready, whatever the files say
}

// hintFile is one file of a hint.
type hintFile struct {
	id         int64
	path       string // last known path
	length     int64
	original   int
	target     int
	held       bool   // this hint's target is in the file's marker
	result     string // set once the hint let go of the file (Result*)
	err        string // last error, retried
	placed     int
	firstShort int
	ready      bool
}

// fileState is one file held by one or more hints: what its marker says.
type fileState struct {
	original int            // factor before any hint
	applied  int            // factor this manager last set
	hints    map[string]int // hint id -> target
}

func (fs *fileState) want(without string) int {
	w := fs.original
	for id, t := range fs.hints {
		if id != without {
			w = max(w, t)
		}
	}
	return w
}

// New builds a Manager. It makes no call to the host; Run does.
func New(cfg Config, host Host, log hclog.Logger) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if host == nil {
		return nil, fmt.Errorf("hotspot: %w: nil host client", ErrBadConfig)
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	m := &Manager{
		cfg:      cfg,
		host:     host,
		log:      log.Named("hotspot"),
		now:      time.Now,
		hints:    map[string]*hint{},
		files:    map[int64]*fileState{},
		paths:    map[string]int64{},
		implicit: make(chan string, 64),
	}
	m.metrics = newMetrics(m)
	m.reactive = newReactive(cfg)
	return m, nil
}

// Run recovers the hints recorded before a restart, then tracks readiness, restores factors
// at the end of each window, boosts and restores the NameNode's replication limits, and turns
// reactive triggers into implicit hints, until ctx ends. Host failures are retried with
// backoff; Run returns nil when ctx ends.
func (m *Manager) Run(ctx context.Context) error {
	backoff := m.cfg.PollInterval
	for {
		err := m.recover(ctx)
		if err == nil {
			break
		}
		m.log.Warn("recovery waits for the NameNode", "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
	t := time.NewTicker(m.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			// Limits must not stay boosted while nobody watches them; recovery on the next
			// start would also restore them from the limits xattr.
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			m.writeMu.Lock()
			if err := m.releaseBoost(sctx, ""); err != nil {
				m.log.Warn("restoring replication limits on shutdown", "error", err)
			}
			m.writeMu.Unlock()
			cancel()
			return nil
		case p := <-m.implicit:
			m.createImplicit(ctx, p)
		case <-t.C:
			m.tick(ctx)
		}
	}
}

// tick does one round: cluster state, readiness, due restores, limits, balanced reads.
//
// The cluster state (live DataNodes, the superuser's name) is asked for only while a hint is
// preparing: the live count caps the replicas readiness waits for, and nothing else in a tick
// reads it. Without such a hint a tick makes no host call at all, so an idle NameNode is not
// asked for its state every second. The superuser's name is also read by recovery and by each
// Create (which asks for the state itself, reactive hints included), and it does not change
// while the NameNode runs.
func (m *Manager) tick(ctx context.Context) {
	if m.preparing() {
		if ns, err := m.host.GetNamesystemState(ctx); err == nil {
			m.mu.Lock()
			m.live = ns.LiveDatanodes
			m.superuser = ns.Superuser
			m.mu.Unlock()
		}
	}
	m.trackReadiness(ctx)
	now := m.now()
	m.mu.Lock()
	var due []*hint
	for _, h := range m.hints {
		if h.rec.Until <= now.UnixMilli() || h.rec.Ended != "" {
			due = append(due, h)
		}
	}
	m.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].rec.Until < due[j].rec.Until })
	for _, h := range due {
		if err := m.restore(ctx, h); err != nil {
			m.log.Warn("restore deferred", "hint", h.rec.ID, "error", err)
		}
	}
	if err := m.manageBoost(ctx); err != nil {
		m.log.Warn("replication limits", "error", err)
	}
	m.mu.Lock()
	m.reindexLocked()
	m.mu.Unlock()
	m.pushBalanced(ctx)
}

// preparing reports whether a hint is waiting for its replicas.
func (m *Manager) preparing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range m.hints {
		if h.state == StatePreparing {
			return true
		}
	}
	return false
}

// reindexLocked rebuilds the path index of held files. Callers hold mu.
func (m *Manager) reindexLocked() {
	clear(m.paths)
	for _, h := range m.hints {
		for _, f := range h.files {
			if f.held && f.path != "" {
				m.paths[f.path] = f.id
			}
		}
	}
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "h" + hex.EncodeToString(b[:])
}
