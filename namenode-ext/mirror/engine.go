package mirror

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/namenode-ext/events"
	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// State of a checkpoint.
type State string

const (
	StateOpen      State = "OPEN"
	StateCopying   State = "COPYING"
	StateCommitted State = "COMMITTED"
	StateFailed    State = "FAILED"
	StateRetired   State = "RETIRED"
)

func (s State) terminal() bool { return s == StateCommitted || s == StateFailed || s == StateRetired }

// Key names a checkpoint.
type Key struct {
	Rule, Job string
	Step      int64
}

func (k Key) String() string { return fmt.Sprintf("%s/%s/%d", k.Rule, k.Job, k.Step) }

type fileState int

const (
	fileQueued   fileState = iota
	fileCopying            // a worker holds it
	fileCopied             // copied and checked, waiting for the journal
	fileVerified           // in the journal
)

type file struct {
	transfer
	rel      string
	size     int64
	rec      fileRecord
	recReady bool    // the current attempt's rec is checked; its close on dc-b may be under way
	parts    []*part // a large file copied in ranges (nil: in one stream)
	snap     srcInfo // the source as its first range saw it
	txid     int64   // the event that queued it (0: found by a listing); see durableTxid
}

// transfer is the queue state of one copy: a whole file, or one range of a large file. Both
// fail and retry alike (transferFailedLocked).
type transfer struct {
	state     fileState
	attempts  int
	notBefore time.Time
	copied    int64 // bytes streamed in the current attempt
}

// fixup is a copied file whose permission or group changed on dc-a after the copy.
type fixup struct {
	rel   string
	perm  os.FileMode
	group string
}

// checkpoint is one checkpoint being mirrored (or recently finished).
type checkpoint struct {
	id       string // journal id, unique per instance
	key      Key
	rule     *Rule
	stepStr  string
	owner    string
	group    string
	perm     os.FileMode
	mtime    int64
	resolved bool // owner & attributes known

	srcDir   string // current directory on dc-a (temporary or final)
	finalSrc string
	dest     string
	staging  string

	state          State
	complete       bool // complete on dc-a (listing may still be under way)
	listed         bool // the complete checkpoint's files are all known
	urgent         bool
	urgentBy       string // who marked it urgent ("" : recovered from the journal)
	urgentAdmin    bool   // an administrator did
	err            string
	lastErr        string // last transient error (retrying)
	commitOn       bool   // a commit is under way
	commitAttempts int
	commitFails    int       // commits that failed (back-off doubles with each)
	listedAt       time.Time // the completion listing finished
	copiedAt       time.Time // the last file was copied and checked (journal to follow)
	verifiedAt     time.Time // the last file was journaled

	files      map[string]*file
	order      []*file // queue order
	bytesTotal int64
	bytesDone  int64 // verified
	filesDone  int
	inFlight   int
	retries    int64
	copies     int64
	streamed   atomic.Int64 // bytes streamed, for the rate
	rate       meter

	manifest *preparedManifest // created on dc-b while the last files are copied

	dirsMade map[string]bool // staging subdirectories created on dc-b
	mkdirMu  sync.Mutex
	dirsList []string               // subdirectories on dc-a (relative), from the completion listing
	dirInfos map[string]os.FileInfo // and their attributes then

	firstSeen, completedAt, committedAt time.Time
	changed                             chan struct{} // closed and replaced on every change

	// Event-stream durability (see durableTxid): the highest event txid applied, the lowest
	// txid of an applied event whose effect on the meta record is not saved yet (0: none),
	// a version bumped by every such change, and what the journal holds.
	maxTxid    int64
	metaDirty  int64
	metaVer    int
	metaSaved  bool
	savedState State
	metaTry    time.Time
}

// Engine is the mirror: it turns namespace events into per-file transfers, journals them,
// commits checkpoints and serves the Mirror API. Safe for concurrent use.
type Engine struct {
	cfg     Config
	host    Host
	log     hclog.Logger
	metrics *metrics
	now     func() time.Time

	src, dst *clientPool
	journal  *journal
	pacer    *pacer
	times    *timeSetter

	events     chan events.Event
	dropped    atomic.Int64 // events not acted on (queue full, too many checkpoints)
	queueDrops atomic.Int64 // events lost because the queue was full

	// The event stream's durable resume point (nil: none; every restart lists the active
	// checkpoints again). journalTxid: every event up to it was durable before this process
	// started (read from the journal; -1 none), so replays up to it are skipped.
	cursor                   Cursor
	journalTxid, handledTxid int64
	curTxid                  int64 // txid of the event being handled (e.mu)
	savedTxid                int64 // persisted in the journal and marked on the cursor
	cursorAt                 time.Time
	rescanWait               []*checkpoint // recovered, waiting for the stream's resume point
	rescanBy                 time.Time
	dropsSeen                int64

	mu          sync.Mutex
	cond        *sync.Cond
	ckpts       map[Key]*checkpoint
	byDir       map[string]*checkpoint // srcDir -> checkpoint, open or copying
	finished    []*checkpoint
	urgentSoon  map[Key]pendingUrgent // Urgent for checkpoints not seen yet (bounded, expiring)
	waits       map[string]int        // open Wait streams per user
	waitsAll    int
	recovered   bool
	stopped     bool
	superuser   string
	urgentLive  int // urgent checkpoints with files queued or in flight
	linkBytes   atomic.Int64
	linkRate    meter
	retriesAll  atomic.Int64
	bytesAll    atomic.Int64
	filesAll    atomic.Int64
	inFlightB   atomic.Int64
	inFlightF   atomic.Int64
	copiesAll   atomic.Int64
	commitOrder []Key // commit order, for tests and logs

	defaults     hdfs.ServerDefaults // dc-b's, once known
	haveDefaults bool
	kick         chan struct{} // wakes the run loop (a checkpoint may be ready to list or commit)
	krb          *krbAuth      // Kerberos login (nil under simple authentication)
	flushNow     chan struct{} // wakes the journal (a complete checkpoint has no transfer left)

	cleanupMu   sync.Mutex        // one checkpoint's housekeeping at a time (cleanupLater)
	cleanupHook func(*checkpoint) // tests: replaces the housekeeping
}

// New builds the Engine; Run starts it.
func New(cfg Config, host Host, log hclog.Logger) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Rules) == 0 {
		return nil, fmt.Errorf("mirror: no rules")
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	e := &Engine{
		cfg: cfg, host: host, log: log, now: time.Now,
		src:         newClientPool(cfg.SourceNameNode, cfg.ProxyUser, "", cfg.Concurrency+8),
		dst:         newClientPool(cfg.DestNameNode, cfg.ProxyUser, cfg.SocksProxy, cfg.Concurrency+8),
		pacer:       newPacer(cfg.Bandwidth),
		events:      make(chan events.Event, 1<<16),
		ckpts:       map[Key]*checkpoint{},
		byDir:       map[string]*checkpoint{},
		urgentSoon:  map[Key]pendingUrgent{},
		waits:       map[string]int{},
		kick:        make(chan struct{}, 1),
		flushNow:    make(chan struct{}, 1),
		journalTxid: -1, handledTxid: -1, savedTxid: -1,
	}
	if cfg.Kerberos != nil {
		k, err := loginKerberos(cfg.Kerberos)
		if err != nil {
			return nil, err
		}
		e.krb = k
		e.src.krb, e.src.spn = k, cfg.Kerberos.SourceSPN
		e.dst.krb, e.dst.spn = k, cfg.Kerberos.DestSPN
	}
	e.cond = sync.NewCond(&e.mu)
	ts, err := newTimeSetter(cfg, e.dst.dial, e.krb)
	if err != nil {
		return nil, err
	}
	e.times = ts
	e.journal = &journal{e: e, dir: cfg.JournalDir}
	e.metrics = newMetrics(e)
	return e, nil
}

// Cursor is the event sink's durable resume point (events.Cursor): the mirror marks the txid
// up to which every event's effect is in its journal, and the NameNode hook resumes the event
// stream after the marked txid when either process restarts.
type Cursor interface {
	Mark(txid int64)
	Stream() (resume, first, gaps int64)
}

// UseCursor makes the engine resume from the event stream after a restart instead of listing
// every active checkpoint again (call before Run).
func (e *Engine) UseCursor(c Cursor) { e.cursor = c }

// Interest is what the mirror consumes: namespace events below the literal prefix of each
// rule's patterns.
func (e *Engine) Interest() events.Interest { return InterestOf(e.cfg) }

// InterestOf is the Interest of an Engine of cfg.
func InterestOf(cfg Config) events.Interest {
	in := events.Interest{Namespace: []string{"CLOSE", "RENAME", "UNLINK", "APPEND", "TRUNCATE"}}
	for _, r := range cfg.Rules {
		for _, t := range []string{r.Source, r.Temp} {
			if t == "" {
				continue
			}
			if i := strings.IndexByte(t, '{'); i >= 0 {
				t = t[:i]
			}
			in.PathPrefixes = append(in.PathPrefixes, t)
		}
	}
	return in
}

// Observe hands a namespace event to the engine; it never blocks (a full queue drops the
// event and counts it: the completion listing still finds every file).
func (e *Engine) Observe(ev events.Event) {
	if ev.Namespace == nil {
		return
	}
	select {
	case e.events <- ev:
	default:
		e.dropped.Add(1)
		e.queueDrops.Add(1) // the active checkpoints are listed again (periodic)
	}
}

// Run recovers the journal, then processes events and runs the transfers until ctx ends.
func (e *Engine) Run(ctx context.Context) error {
	defer e.src.close()
	defer e.dst.close()
	backoff := e.cfg.RetryInterval
	for {
		err := e.recover(ctx)
		if err == nil {
			break
		}
		e.log.Warn("mirror recovery waits", "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
	var wg sync.WaitGroup
	for i := 0; i < e.cfg.Concurrency; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); e.worker(ctx) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); e.journalLoop(ctx) }()
	go func() {
		<-ctx.Done()
		e.mu.Lock()
		e.stopped = true
		e.cond.Broadcast()
		e.mu.Unlock()
	}()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case ev := <-e.events:
			e.handle(ctx, ev.Namespace)
		case <-tick.C:
			e.periodic(ctx)
		case <-e.kick:
			e.periodic(ctx)
		}
	}
}

// ruleMatch finds the rule and instance a path belongs to, as a final or a temporary path.
func (e *Engine) ruleMatch(p string) (*Rule, instance, bool, bool) {
	for i := range e.cfg.Rules {
		r := &e.cfg.Rules[i]
		if in, ok := r.source.match(p); ok {
			return r, in, false, true
		}
		if r.temp != nil {
			if in, ok := r.temp.match(p); ok {
				return r, in, true, true
			}
		}
	}
	return nil, instance{}, false, false
}

// handle applies one namespace event.
func (e *Engine) handle(ctx context.Context, ns *events.Namespace) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ns.Txid > 0 {
		if ns.Txid <= e.journalTxid {
			return // its effect was durable before this process started (a replay)
		}
		e.curTxid = ns.Txid
		defer func() { e.curTxid = 0; e.handledTxid = max(e.handledTxid, ns.Txid) }()
	}
	switch ns.Type {
	case "CLOSE":
		r, in, _, ok := e.ruleMatch(ns.Path)
		if !ok || in.rel == "" {
			return
		}
		c := e.checkpointFor(r, in)
		if c == nil || c.state.terminal() {
			return
		}
		c.maxTxid = max(c.maxTxid, e.curTxid)
		if r.Completion == CompleteMarker && in.rel == r.Marker {
			// The marker is mirrored with the rest; its close completes the checkpoint.
			e.addFileLocked(c, in.rel, ns.Size)
			e.markCompleteLocked(c)
		} else if in.rel != e.cfg.Manifest {
			e.addFileLocked(c, in.rel, ns.Size)
		}
	case "RENAME":
		if c := e.byDir[ns.Path]; c != nil && !c.state.terminal() {
			r := c.rule
			in, ok := r.source.match(ns.DstPath)
			if r.Completion == CompleteRename && ok && in.rel == "" && ns.Path != ns.DstPath {
				delete(e.byDir, c.srcDir)
				c.srcDir, c.finalSrc = ns.DstPath, ns.DstPath
				e.byDir[c.srcDir] = c
				e.markCompleteLocked(c)
				return
			}
			e.failLocked(c, fmt.Errorf("%w: %s renamed to %s before the checkpoint was mirrored", ErrSourceChanged, ns.Path, ns.DstPath))
			return
		}
		// A temporary directory renamed into place before any of its files was seen.
		if r, in, temp, ok := e.ruleMatch(ns.Path); ok && temp && in.rel == "" && r.Completion == CompleteRename {
			if fin, ok := r.source.match(ns.DstPath); ok && fin.rel == "" {
				if c := e.checkpointFor(r, fin); c != nil && !c.state.terminal() {
					e.markCompleteLocked(c)
				}
				return
			}
		}
		// A file renamed into or out of a checkpoint directory.
		for _, p := range []string{ns.Path, ns.DstPath} {
			if r, in, _, ok := e.ruleMatch(p); ok && in.rel != "" {
				if c := e.byDir[in.dir]; c != nil && !c.state.terminal() {
					if f := c.files[in.rel]; f != nil && p == ns.Path {
						e.failLocked(c, fmt.Errorf("%w: %s renamed away", ErrSourceChanged, p))
					} else if p == ns.DstPath && r != nil {
						e.addFileLocked(c, in.rel, -1)
					}
				}
			}
		}
	case "UNLINK":
		if c := e.byDir[ns.Path]; c != nil && !c.state.terminal() {
			e.failLocked(c, fmt.Errorf("%w: %s deleted", ErrSourceChanged, ns.Path))
			return
		}
		if _, in, _, ok := e.ruleMatch(ns.Path); ok && in.rel != "" {
			if c := e.byDir[in.dir]; c != nil && !c.state.terminal() && c.files[in.rel] != nil {
				e.failLocked(c, fmt.Errorf("%w: %s deleted", ErrSourceChanged, ns.Path))
			}
		}
	case "APPEND", "TRUNCATE":
		if _, in, _, ok := e.ruleMatch(ns.Path); ok && in.rel != "" {
			if c := e.byDir[in.dir]; c != nil && !c.state.terminal() && c.files[in.rel] != nil {
				e.failLocked(c, fmt.Errorf("%w: %s %s", ErrSourceChanged, ns.Path, strings.ToLower(ns.Type)))
			}
		}
	}
}

// checkpointFor returns the checkpoint of an instance directory, creating it.
func (e *Engine) checkpointFor(r *Rule, in instance) *checkpoint {
	if c := e.byDir[in.dir]; c != nil {
		return c
	}
	k := Key{Rule: r.Name, Job: in.job, Step: in.step}
	if old := e.ckpts[k]; old != nil && (!old.state.terminal() || old.state == StateFailed) {
		// A failed checkpoint stays failed: later events of its files (the writer finishing
		// what made it fail) must not start a second mirror under the same name.
		return old
	} else if old != nil && e.curTxid > 0 && e.curTxid <= old.maxTxid {
		return old // the event stream replaying an event this (committed) mirror covered
	}
	active := 0
	for _, c := range e.ckpts {
		if !c.state.terminal() {
			active++
		}
	}
	if active >= e.cfg.MaxCheckpoints {
		e.dropped.Add(1)
		e.log.Warn("too many checkpoints in flight; ignoring", "checkpoint", k, "max", e.cfg.MaxCheckpoints)
		return nil
	}
	c := e.newCheckpoint(r, k, in.stepStr, in.dir, newID(k))
	if r.temp == nil || in.dir == r.source.expandDir(in) {
		c.finalSrc = in.dir
	}
	e.ckpts[k] = c
	e.byDir[in.dir] = c
	if p, ok := e.urgentSoon[k]; ok {
		c.urgent, c.urgentBy, c.urgentAdmin = true, p.user, p.admin
		delete(e.urgentSoon, k)
	}
	go e.resolve(c)
	return c
}

func (p *pattern) expandDir(in instance) string { return expand(p.tmpl, in.job, in.stepStr) }

func (e *Engine) newCheckpoint(r *Rule, k Key, stepStr, srcDir, id string) *checkpoint {
	return &checkpoint{
		id: id, key: k, rule: r, stepStr: stepStr, srcDir: srcDir,
		dest:      expand(r.Dest, k.Job, stepStr),
		staging:   path.Join(e.cfg.StagingDir, id),
		state:     StateOpen,
		files:     map[string]*file{},
		dirsMade:  map[string]bool{},
		firstSeen: e.now(),
		changed:   make(chan struct{}),
	}
}

func newID(k Key) string {
	var b [4]byte
	rand.Read(b[:])
	job := strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' {
			return '_'
		}
		return r
	}, k.Job)
	return fmt.Sprintf("%s.%s.%d.%s", k.Rule, job, k.Step, hex.EncodeToString(b[:]))
}

// resolve reads the checkpoint directory's owner and attributes (as the NameNode, through the
// host service: metadata only), retrying until it works or the checkpoint ends.
func (e *Engine) resolve(c *checkpoint) {
	delay := 100 * time.Millisecond
	var goneSince time.Time
	for {
		e.mu.Lock()
		dir, done := c.srcDir, c.state.terminal() || e.stopped
		e.mu.Unlock()
		if done {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := e.host.GetFileStatus(ctx, dir, nnhost.AsService)
		cancel()
		if status.Code(err) == codes.NotFound {
			// A temporary directory renamed into place before its RENAME event was handled
			// is looked up again under its new name; one that stays gone fails after
			// resolveGone: never an entry that waits for ever.
			e.mu.Lock()
			moved := c.srcDir != dir
			if goneSince.IsZero() {
				goneSince = time.Now()
			}
			if !moved && time.Since(goneSince) >= resolveGone {
				e.failLocked(c, fmt.Errorf("%w: %s is gone", ErrSourceChanged, dir))
				e.mu.Unlock()
				return
			}
			e.mu.Unlock()
			if moved {
				continue
			}
		} else {
			goneSince = time.Time{}
		}
		if err == nil {
			e.mu.Lock()
			if rerr := e.refuseOwnerLocked(st.Owner, c); rerr != nil {
				e.metrics.refused.Inc()
				e.failLocked(c, rerr)
				e.mu.Unlock()
				return
			}
			e.mu.Unlock()
			e.checkUrgentBy(c, dir, st.Owner)
			e.mu.Lock()
			c.owner, c.group, c.perm, c.mtime = st.Owner, st.Group, os.FileMode(st.Permission), st.MtimeMs
			c.resolved = true
			e.changedLocked(c)
			e.cond.Broadcast()
			e.mu.Unlock()
			e.journal.saveMeta(c)
			return
		}
		e.log.Debug("resolving checkpoint owner", "dir", dir, "error", err)
		time.Sleep(delay)
		delay = min(2*delay, 5*time.Second)
	}
}

// resolveGone is how long a checkpoint's directory may be missing (its RENAME event not
// handled yet) before the checkpoint fails.
var resolveGone = 20 * time.Second

// checkUrgentBy keeps a checkpoint urgent that someone marked before it was seen only if that
// caller may write its directory (the owner, an administrator, or one HDFS lets write it):
// an urgent checkpoint pauses everybody's bulk copies.
func (e *Engine) checkUrgentBy(c *checkpoint, dir, owner string) {
	e.mu.Lock()
	by, admin, urgent := c.urgentBy, c.urgentAdmin, c.urgent
	e.mu.Unlock()
	if !urgent || by == "" || admin || by == owner {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := e.mayWrite(ctx, dir, by)
	cancel()
	if err == nil {
		return
	}
	e.mu.Lock()
	c.urgent, c.urgentBy = false, ""
	e.recountUrgentLocked()
	e.mu.Unlock()
	e.log.Warn("urgent mark dropped: its caller may not write the checkpoint", "checkpoint", c.key, "by", by, "owner", owner, "error", err)
}

// addFileLocked adds (or refreshes) a file and queues it. size < 0: unknown yet.
func (e *Engine) addFileLocked(c *checkpoint, rel string, size int64) {
	if f := c.files[rel]; f != nil {
		if f.state == fileQueued && size >= 0 {
			c.bytesTotal += size - max(f.size, 0)
			f.size = size
		}
		return
	}
	if len(c.files) >= e.cfg.MaxFiles {
		e.failLocked(c, fmt.Errorf("%w: more than %d (newtricks.mirror.max-files)", ErrTooManyFiles, e.cfg.MaxFiles))
		return
	}
	f := &file{rel: rel, size: size, txid: e.curTxid}
	c.files[rel] = f
	c.order = append(c.order, f)
	if size > 0 {
		c.bytesTotal += size
	}
	if c.urgent {
		e.recountUrgentLocked()
	}
	e.changedLocked(c)
	e.cond.Broadcast()
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// markCompleteLocked records that the checkpoint is complete on dc-a; the listing that finds
// every file runs next (periodic).
func (e *Engine) markCompleteLocked(c *checkpoint) {
	if c.complete {
		return
	}
	c.complete = true
	c.completedAt = e.now()
	c.state = StateCopying
	e.dirtyMetaLocked(c)
	e.changedLocked(c)
	signal(e.kick)
	go e.journal.saveMeta(c)
}

func (e *Engine) failLocked(c *checkpoint, err error) {
	if c.state.terminal() {
		return
	}
	e.log.Warn("checkpoint failed", "checkpoint", c.key, "error", err)
	c.state = StateFailed
	c.err = err.Error()
	e.dirtyMetaLocked(c)
	delete(e.byDir, c.srcDir)
	e.recountUrgentLocked()
	e.changedLocked(c)
	e.finishLocked(c)
	e.metrics.failed.Inc()
	go func() {
		e.journal.saveMeta(c)
		e.cleanupStaging(c)
	}()
}

func (e *Engine) finishLocked(c *checkpoint) {
	e.finished = append(e.finished, c)
	if over := len(e.finished) - e.cfg.KeepFinished; over > 0 {
		for _, old := range e.finished[:over] {
			if e.ckpts[old.key] == old {
				delete(e.ckpts, old.key)
			}
		}
		e.finished = e.finished[over:]
	}
}

// dirtyMetaLocked records a change of the checkpoint's meta record; made by an event, that
// event is not durable until the record is saved.
func (e *Engine) dirtyMetaLocked(c *checkpoint) {
	c.metaVer++
	if t := e.curTxid; t > 0 {
		c.maxTxid = max(c.maxTxid, t)
		if c.metaDirty == 0 || t < c.metaDirty {
			c.metaDirty = t
		}
	}
}

func (e *Engine) changedLocked(c *checkpoint) {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (e *Engine) recountUrgentLocked() {
	n := 0
	for _, c := range e.ckpts {
		if c.urgent && !c.state.terminal() && c.pendingLocked() {
			n++
		}
	}
	e.urgentLive = n
	e.cond.Broadcast()
}

// copiedAllLocked reports whether every file is copied and checked (journaled or waiting for
// the journal).
func (c *checkpoint) copiedAllLocked() bool {
	if c.filesDone == len(c.files) {
		return true
	}
	for _, f := range c.order {
		if f.state != fileCopied && f.state != fileVerified {
			return false
		}
	}
	return true
}

// recordsKnownLocked reports whether every file's record is known: copied and checked, or
// streamed and checked against dc-a while dc-b completes it. The commit writes the manifest
// from then on; it renames into place only once every file is copied and journaled.
func (c *checkpoint) recordsKnownLocked() bool {
	for _, f := range c.order {
		if f.state != fileCopied && f.state != fileVerified && (f.state != fileCopying || !f.recReady) {
			return false
		}
	}
	return true
}

// pendingLocked reports whether the checkpoint has files queued or in flight.
func (c *checkpoint) pendingLocked() bool {
	for _, f := range c.order {
		if f.state == fileQueued || f.state == fileCopying {
			return true
		}
	}
	return false
}

// periodic lists completed checkpoints, starts commits and samples rates.
func (e *Engine) periodic(ctx context.Context) {
	e.checkStream(ctx)
	now := e.now()
	e.linkRate.sample(now, e.linkBytes.Load())
	e.mu.Lock()
	var list, commit []*checkpoint
	for _, c := range e.ckpts {
		c.rate.sample(now, c.streamed.Load())
		if c.state.terminal() || !c.resolved {
			continue
		}
		if c.complete && !c.listed && !c.commitOn {
			c.commitOn = true // reused as "a background step is running"
			list = append(list, c)
		} else if c.listed && !c.commitOn && (c.copiedAllLocked() || c.recordsKnownLocked()) {
			// The commit prepares (manifest, attributes) while dc-b completes the last files
			// and the journal records them; it renames into place only once every file is
			// journaled (commitOnce).
			c.commitOn = true
			commit = append(commit, c)
		}
	}
	e.mu.Unlock()
	for _, c := range list {
		go e.list(ctx, c)
	}
	for _, c := range commit {
		go e.commit(ctx, c)
	}
}

// list walks a complete checkpoint on dc-a (as its owner) so files whose events were missed
// are copied too, and files the mirror saw that are gone fail it.
func (e *Engine) list(ctx context.Context, c *checkpoint) {
	err := e.listOnce(ctx, c)
	e.mu.Lock()
	defer e.mu.Unlock()
	c.commitOn = false
	if err != nil {
		if errors.Is(err, ErrSourceChanged) || errors.Is(err, ErrTooManyFiles) {
			e.failLocked(c, err)
			return
		}
		c.lastErr = err.Error()
		e.log.Warn("listing checkpoint", "checkpoint", c.key, "error", err)
	}
}

func (e *Engine) listOnce(ctx context.Context, c *checkpoint) error {
	e.mu.Lock()
	dir, owner := c.srcDir, c.owner
	e.mu.Unlock()
	found, dirInfos, err := e.walkTree(owner, dir, e.cfg.MaxFiles)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %s: %v", ErrSourceChanged, dir, err)
		}
		return err
	}
	var dirs []string
	for rel := range dirInfos {
		dirs = append(dirs, rel)
	}
	// Files still being written keep the checkpoint open until their CLOSE arrives. Files the
	// mirror knows of came from a CLOSE or a listing that checked this already, except those
	// renamed into the checkpoint (size unknown).
	var uc, unsure []string
	e.mu.Lock()
	for rel := range found {
		if f := c.files[rel]; f == nil || (f.state == fileQueued && f.size < 0) {
			unsure = append(unsure, rel)
		}
	}
	e.mu.Unlock()
	for _, rel := range unsure {
		lb, err := e.host.GetBlockLocations(ctx, dir+"/"+rel, 1, nnhost.AsService)
		if err == nil && lb.UnderConstruction {
			uc = append(uc, rel)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.state.terminal() {
		return nil
	}
	for rel, f := range c.files {
		fi, ok := found[rel]
		if !ok {
			return fmt.Errorf("%w: %s/%s vanished", ErrSourceChanged, dir, rel)
		}
		if f.state != fileVerified && f.state != fileCopied {
			continue
		}
		s := infoOf(fi)
		if s.id != f.rec.FileID || s.size != f.rec.Size || s.mtime != f.rec.MtimeMs {
			// Rewritten after it was copied: copy it again (the commit waits for it).
			e.log.Info("file changed after its copy; copying again", "checkpoint", c.key, "file", rel)
			if f.state == fileVerified {
				c.filesDone--
				c.bytesDone -= f.size
			}
			f.state, f.attempts = fileQueued, 0
			c.bytesTotal += s.size - f.size
			f.size = s.size
			e.cond.Broadcast()
			continue
		}
	}
	sort.Strings(dirs)
	c.dirsList, c.dirInfos = dirs, dirInfos
	open := map[string]bool{}
	for _, rel := range uc {
		open[rel] = true
	}
	for rel, fi := range found {
		size := fi.Size()
		if open[rel] || (rel == e.cfg.Manifest && c.files[rel] == nil) {
			continue
		}
		e.addFileLocked(c, rel, size)
	}
	if len(uc) > 0 {
		return fmt.Errorf("%d files still open for writing (e.g. %s)", len(uc), uc[0])
	}
	c.listed = true
	c.listedAt = e.now()
	signal(e.kick)
	signal(e.flushNow)
	e.log.Info("checkpoint complete on dc-a", "checkpoint", c.key, "files", len(c.files), "dir", dir)
	e.changedLocked(c)
	if c.commitAttempts == 0 && c.manifest == nil {
		c.manifest = &preparedManifest{ready: make(chan struct{})}
		go e.prepareManifest(c, c.manifest)
	}
	return nil
}
