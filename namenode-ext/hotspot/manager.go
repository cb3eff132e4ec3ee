package hotspot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	nnv1 "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Hint states.
const (
	StatePreparing = "PREPARING"
	StateReady     = "READY"
	StateRestoring = "RESTORING"
	StateFinished  = "FINISHED"
	StateCancelled = "CANCELLED"
)

// maxSkippedListed bounds the skipped entries of one answer; the rest are only counted.
const maxSkippedListed = 100

// maxLocationsPerTick bounds the GetBlockLocations calls of one readiness round, so a hint
// of thousands of files does not hold up restores and other hints; the rest is checked in
// the next rounds.
const maxLocationsPerTick = 512

// keepFinished is how many finished hints Status can still report.
const keepFinished = 256

// Manager plans, applies, tracks and restores hints. It is safe for concurrent use.
type Manager struct {
	cfg     Config
	host    nnv1.NameNodeHostClient
	log     hclog.Logger
	metrics *metrics
	now     func() time.Time

	// opMu serialises everything that changes factors, limits or the registry, so the
	// in-memory view and HDFS never diverge by interleaving.
	opMu sync.Mutex

	mu        sync.Mutex // guards the fields below
	hints     map[string]*hint
	files     map[string]*tracked
	finished  []*hint
	recovered bool
	superuser string
	live      int
	boosted   map[string]string // key -> value before boosting; nil when not boosted

	reactive *reactive
	implicit chan string
}

// hint is the in-memory state of one active or recently finished hint.
type hint struct {
	rec     record
	files   []*hintFile
	state   string
	readyAt time.Time
}

type hintFile struct {
	path     string
	length   int64
	original int
	target   int
	placed   int
	ready    bool
	restored bool
}

// tracked is one file held by one or more hints.
type tracked struct {
	original int            // factor before any hint
	applied  int            // factor this manager last set
	hints    map[string]int // hint id -> target
}

// New builds a Manager. It makes no call to the host; Run does.
func New(cfg Config, host nnv1.NameNodeHostClient, log hclog.Logger) (*Manager, error) {
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
		files:    map[string]*tracked{},
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
			m.opMu.Lock()
			if err := m.releaseBoost(sctx); err != nil {
				m.log.Warn("restoring replication limits on shutdown", "error", err)
			}
			m.opMu.Unlock()
			cancel()
			return nil
		case p := <-m.implicit:
			m.createImplicit(ctx, p)
		case <-t.C:
			m.tick(ctx)
		}
	}
}

// tick does one round of readiness tracking, restores and limit management.
func (m *Manager) tick(ctx context.Context) {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	if ns, err := m.host.GetNamesystemState(ctx, &nnv1.GetNamesystemStateRequest{}); err == nil {
		m.mu.Lock()
		m.live = int(ns.LiveDatanodes)
		m.superuser = ns.Superuser
		m.mu.Unlock()
	}
	m.trackReadiness(ctx)
	now := m.now()
	m.mu.Lock()
	var due []*hint
	preparing := false
	for _, h := range m.hints {
		if h.rec.Until <= now.UnixMilli() || h.rec.Ended != "" {
			due = append(due, h)
		} else if h.state == StatePreparing {
			preparing = true
		}
	}
	m.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].rec.Until < due[j].rec.Until })
	for _, h := range due {
		if err := m.restore(ctx, h); err != nil {
			m.log.Warn("restore deferred", "hint", h.rec.ID, "error", err)
		}
	}
	var err error
	if preparing {
		err = m.ensureBoost(ctx)
	} else {
		err = m.releaseBoost(ctx)
	}
	if err != nil {
		m.log.Warn("replication limits", "error", err)
	}
}

// trackReadiness counts the replicas placed for every file of every preparing hint.
func (m *Manager) trackReadiness(ctx context.Context) {
	m.mu.Lock()
	var work []*hint
	for _, h := range m.hints {
		if h.state == StatePreparing {
			work = append(work, h)
		}
	}
	live := m.live
	m.mu.Unlock()
	sort.Slice(work, func(i, j int) bool { return work[i].rec.Created < work[j].rec.Created })
	budget := maxLocationsPerTick
	for _, h := range work {
		all := true
		for _, f := range h.files {
			if f.ready {
				continue
			}
			if budget == 0 {
				all = false
				break
			}
			budget--
			placed, err := m.placed(ctx, f.path)
			if err != nil {
				if hostCode(err) == codes.NotFound {
					m.mu.Lock()
					f.ready, f.placed = true, 0
					m.mu.Unlock()
					continue
				}
				m.metrics.hostErrors.WithLabelValues("locations").Inc()
				all = false
				break
			}
			want := f.target
			if live > 0 {
				want = min(want, live)
			}
			m.mu.Lock()
			f.placed = placed
			f.ready = placed >= want
			m.mu.Unlock()
			if !f.ready {
				all = false
			}
		}
		if all {
			m.mu.Lock()
			if h.state == StatePreparing {
				h.state = StateReady
				h.readyAt = m.now()
				m.metrics.readySeconds.Observe(h.readyAt.Sub(time.UnixMilli(h.rec.Created)).Seconds())
				m.log.Info("hint ready", "hint", h.rec.ID, "files", len(h.files),
					"after", h.readyAt.Sub(time.UnixMilli(h.rec.Created)).Round(time.Millisecond))
			}
			m.mu.Unlock()
		}
	}
}

// placed returns the fewest live replicas over the blocks of p.
func (m *Manager) placed(ctx context.Context, p string) (int, error) {
	lb, err := m.host.GetBlockLocations(ctx, &nnv1.GetBlockLocationsRequest{Path: p})
	if err != nil {
		return 0, err
	}
	if len(lb.Blocks) == 0 {
		return 1 << 30, nil // empty file: nothing to copy
	}
	fewest := 1 << 30
	for _, b := range lb.Blocks {
		n := len(b.Locations)
		if b.Corrupt {
			n = 0
		}
		fewest = min(fewest, n)
	}
	return fewest, nil
}

// Create plans the request and, unless it is a dry run, applies it.
func (m *Manager) Create(ctx context.Context, req Request) (*Plan, error) {
	if err := req.Validate(m.cfg); err != nil {
		return nil, err
	}
	return m.create(ctx, req, false)
}

// Plan is the answer to Create.
type Plan struct {
	HintID         string
	Files          []FilePlan
	BytesToCopy    int64
	EstimatedReady time.Time
	HotFrom        time.Time
	Deadline       time.Time
	Skipped        []Skipped
	SkippedOmitted int
	Notes          []string
	Factor         Factor
	Load           ClusterLoad
	Partial        bool
}

func (m *Manager) create(ctx context.Context, req Request, implicit bool) (*Plan, error) {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	m.mu.Lock()
	recovered, active := m.recovered, len(m.hints)
	m.mu.Unlock()
	if !recovered {
		return nil, ErrRecovering
	}
	if !req.DryRun && active >= m.cfg.MaxActiveHints {
		return nil, fmt.Errorf("%w: %d active, at most %d (newtricks.hotspot.max-active-hints)", ErrTooManyHints, active, m.cfg.MaxActiveHints)
	}
	ns, err := m.host.GetNamesystemState(ctx, &nnv1.GetNamesystemStateRequest{})
	if err != nil {
		return nil, fmt.Errorf("namesystem state: %w: %v", ErrUnavailable, err)
	}
	if !ns.Active || ns.SafeMode {
		return nil, fmt.Errorf("%w: NameNode active=%v safe_mode=%v", ErrUnavailable, ns.Active, ns.SafeMode)
	}
	m.mu.Lock()
	m.superuser = ns.Superuser
	m.mu.Unlock()
	hostUser := req.User
	if implicit {
		hostUser = "" // reactive hints act as the NameNode identity; the admin switched them on
	}

	ex, err := m.expand(ctx, req.Paths, hostUser, m.cfg.MaxFiles)
	if err != nil {
		return nil, err
	}
	skipped := ex.skipped
	var cands []*nnv1.FileStatus
	for _, st := range ex.files {
		if st.Replication < 1 {
			skipped = append(skipped, Skipped{st.Path, SkipErasureCoded, "erasure-coded or replication unknown; not replicated by factor"})
			continue
		}
		if !implicit {
			_, err := m.host.CheckAccess(ctx, &nnv1.CheckAccessRequest{Path: st.Path, User: req.User, Action: "WRITE"})
			if err != nil {
				if terr := m.transient("access "+st.Path, err); terr != nil {
					return nil, terr
				}
				skipped = append(skipped, *m.skipFor(st.Path, err))
				continue
			}
		}
		cands = append(cands, st)
	}

	rep, err := m.host.GetDatanodeReport(ctx, &nnv1.GetDatanodeReportRequest{})
	if err != nil {
		return nil, fmt.Errorf("datanode report: %w: %v", ErrUnavailable, err)
	}
	load := loadOf(rep)
	factor := m.cfg.PlanFactor(req.Readers, req.Replication, load)

	m.mu.Lock()
	var files []FilePlan
	blockSize := map[string]int64{}
	for _, st := range cands {
		cur := int(st.Replication)
		fp := FilePlan{Path: st.Path, Length: st.Length, Original: cur, Current: cur, Target: factor.Target}
		if tr, ok := m.files[st.Path]; ok {
			// Held by another hint: this hint's own target is measured against the true
			// original, so it does not inherit the other hint's factor.
			fp.Original = tr.original
		}
		if fp.Target <= fp.Original {
			fp.Target = fp.Original
			fp.Note = "already at or above the target factor"
		}
		files = append(files, fp)
		blockSize[st.Path] = st.BlockSize
	}
	m.mu.Unlock()

	files, qskip, err := m.fitQuotas(ctx, files)
	if err != nil {
		return nil, err
	}
	skipped = append(skipped, qskip...)

	now := m.now()
	plan := &Plan{
		Notes:    factor.Notes,
		Factor:   factor,
		Load:     load,
		HotFrom:  now.Add(req.HotIn),
		Deadline: now.Add(req.HotIn + req.HotFor),
	}
	if len(files) == 0 {
		plan.Skipped = skipped
		return nil, nothingPlanned(skipped)
	}

	rec := record{V: recordVersion, User: req.User, Created: now.UnixMilli(), HotFrom: plan.HotFrom.UnixMilli(),
		Until: plan.Deadline.UnixMilli(), Readers: req.Readers, Implicit: implicit}
	if implicit {
		rec.User = ""
	}
	for _, f := range files {
		rec.Files = append(rec.Files, recFile{Path: f.Path, Original: f.Original, Target: f.Target, Length: f.Length})
	}
	if !req.DryRun {
		rec.ID = newID()
		enc, left, err := fitRecord(&rec, m.cfg.hintName(rec.ID), m.cfg.MaxXAttrBytes)
		if err != nil {
			return nil, fmt.Errorf("encode hint record: %w", err)
		}
		for _, f := range left {
			skipped = append(skipped, Skipped{f.Path, SkipStateBudget,
				"hint record full (newtricks.hotspot.state.max-xattr-bytes); send the rest in another hint"})
		}
		files = files[:len(rec.Files)]
		if len(files) == 0 {
			return nil, nothingPlanned(skipped)
		}
		// The record goes first: from here on every change is tracked for restore.
		if _, err := m.host.SetXAttr(ctx, &nnv1.SetXAttrRequest{Path: m.cfg.StateDir, Name: m.cfg.hintName(rec.ID), Value: enc}); err != nil {
			m.metrics.hostErrors.WithLabelValues("setxattr").Inc()
			return nil, fmt.Errorf("write hint record on %s: %w: %v", m.cfg.StateDir, ErrUnavailable, err)
		}
	}

	plan.HintID = rec.ID
	plan.Files = files
	for _, f := range files {
		if f.Target > f.Current {
			plan.BytesToCopy += int64(f.Target-f.Current) * f.Length
		}
		if f.Note != "" && f.Note != "already at or above the target factor" {
			plan.Partial = true
		}
	}
	plan.EstimatedReady = now.Add(m.cfg.estimateReady(files, blockSize, load.Live))
	sortSkipped(skipped)
	// Caps from load and cluster size are notes, not a partial plan, unless the caller asked
	// for an explicit factor that could not be given.
	if len(skipped) > 0 || (req.Replication > factor.Target) {
		plan.Partial = true
	}
	if len(skipped) > maxSkippedListed {
		plan.SkippedOmitted = len(skipped) - maxSkippedListed
		skipped = skipped[:maxSkippedListed]
	}
	plan.Skipped = skipped
	if req.DryRun {
		return plan, nil
	}

	h := &hint{rec: rec, state: StatePreparing}
	m.mu.Lock()
	for _, f := range files {
		tr, ok := m.files[f.Path]
		if !ok {
			tr = &tracked{original: f.Original, applied: f.Current, hints: map[string]int{}}
			m.files[f.Path] = tr
		}
		tr.hints[rec.ID] = f.Target
		h.files = append(h.files, &hintFile{path: f.Path, length: f.Length, original: f.Original, target: f.Target})
	}
	m.hints[rec.ID] = h
	m.mu.Unlock()
	kind := "explicit"
	if implicit {
		kind = "implicit"
	}
	m.metrics.created.WithLabelValues(kind).Inc()
	m.metrics.bytesPlanned.Add(float64(plan.BytesToCopy))

	for i := range plan.Files {
		f := &plan.Files[i]
		if f.Target <= f.Current {
			continue
		}
		if err := m.raise(ctx, rec.ID, f); err != nil {
			// Tracked anyway: the restore sets the original factor, which is harmless.
			f.Note = "not raised: " + hostMessage(err)
			f.Target = f.Current
			m.mu.Lock()
			h.files[i].target = f.Current // nothing to wait for
			m.mu.Unlock()
			plan.Partial = true
			m.log.Warn("raise failed", "hint", rec.ID, "path", f.Path, "error", err)
		}
	}
	m.log.Info("hint created", "hint", rec.ID, "user", rec.User, "files", len(files), "target", factor.Target,
		"bytes_to_copy", plan.BytesToCopy, "until", plan.Deadline.UTC().Format(time.RFC3339), "implicit", implicit)
	if plan.BytesToCopy > 0 {
		if err := m.ensureBoost(ctx); err != nil {
			m.log.Warn("boosting replication limits", "error", err)
		}
	}
	return plan, nil
}

// raise sets the file's marker and factor (as the NameNode identity: the user's right to
// change the file was checked before).
func (m *Manager) raise(ctx context.Context, id string, f *FilePlan) error {
	mk, _ := json.Marshal(marker{Original: f.Original, Hint: id})
	if _, err := m.host.SetXAttr(ctx, &nnv1.SetXAttrRequest{Path: f.Path, Name: m.cfg.markerName(), Value: mk}); err != nil {
		m.metrics.hostErrors.WithLabelValues("setxattr").Inc()
		m.log.Debug("marker not written", "path", f.Path, "error", err)
	}
	m.mu.Lock()
	tr := m.files[f.Path]
	want := f.Target
	for _, t := range tr.hints {
		want = max(want, t)
	}
	m.mu.Unlock()
	if _, err := m.host.SetReplication(ctx, &nnv1.SetReplicationRequest{Path: f.Path, Replication: int32(want)}); err != nil {
		m.metrics.hostErrors.WithLabelValues("setreplication").Inc()
		m.mu.Lock()
		tr.hints[id] = tr.original // this hint wants nothing of the file any more
		m.mu.Unlock()
		return err
	}
	m.mu.Lock()
	tr.applied = want
	m.mu.Unlock()
	return nil
}

// fitQuotas reads the space quota of every ancestor of the files that grow and lowers the
// targets to fit.
func (m *Manager) fitQuotas(ctx context.Context, files []FilePlan) ([]FilePlan, []Skipped, error) {
	quotas := map[string]int64{}
	checked := map[string]bool{}
	for _, f := range files {
		if f.Target <= f.Current {
			continue
		}
		for _, d := range ancestors(f.Path) {
			if checked[d] {
				continue
			}
			checked[d] = true
			cs, err := m.host.GetContentSummary(ctx, &nnv1.GetContentSummaryRequest{Path: d})
			if err != nil {
				if terr := m.transient("summary "+d, err); terr != nil {
					return nil, nil, terr
				}
				continue
			}
			if cs.SpaceQuota >= 0 {
				quotas[d] = cs.SpaceQuota - cs.SpaceConsumed
			}
		}
	}
	kept, skipped := applyQuota(files, quotas)
	return kept, skipped, nil
}

// nothingPlanned picks the error for a hint of which no file survived planning.
func nothingPlanned(skipped []Skipped) error {
	counts := map[string]int{}
	for _, s := range skipped {
		counts[s.Code]++
	}
	var first []string
	for i, s := range skipped {
		if i == 3 {
			first = append(first, fmt.Sprintf("and %d more", len(skipped)-3))
			break
		}
		if s.Path != "" {
			first = append(first, s.Path+": "+s.Reason)
		} else {
			first = append(first, s.Reason)
		}
	}
	msg := "no file to boost: " + strings.Join(first, "; ")
	n := len(skipped)
	switch {
	case n == 0:
		return fmt.Errorf("%w: %s", ErrNothingPlanned, "no file matched")
	case counts[SkipNotFound] == n:
		return fmt.Errorf("%w: %s", ErrNotFound, msg)
	case counts[SkipPermission]+counts[SkipOutside] == n:
		return fmt.Errorf("%w: %s", ErrPermission, msg)
	case counts[SkipQuota] == n:
		return fmt.Errorf("%w: %s", ErrQuota, msg)
	}
	return fmt.Errorf("%w: %s", ErrNothingPlanned, msg)
}

func loadOf(rep *nnv1.DatanodeReport) ClusterLoad {
	var l ClusterLoad
	var x int64
	for _, d := range rep.Live {
		if d.AdminState != "" && d.AdminState != "NORMAL" && d.AdminState != "IN_SERVICE" {
			continue
		}
		l.Live++
		x += int64(d.Xceivers)
	}
	if l.Live > 0 {
		l.AvgXceivers = float64(x) / float64(l.Live)
	}
	l.Pending = rep.PendingReconstruction + rep.UnderReplicated
	return l
}

// restore ends h: every file goes back to its original factor (or to the highest target of
// the other hints holding it), then the hint record is removed. A transient failure leaves
// the hint in RESTORING for the next tick; a file whose factor was changed by someone else
// meanwhile is left as it is.
func (m *Manager) restore(ctx context.Context, h *hint) error {
	m.mu.Lock()
	h.state = StateRestoring
	m.mu.Unlock()
	for _, f := range h.files {
		if f.restored {
			continue
		}
		if err := m.restoreFile(ctx, h.rec.ID, f.path); err != nil {
			return err
		}
		f.restored = true
	}
	if _, err := m.host.RemoveXAttr(ctx, &nnv1.RemoveXAttrRequest{Path: m.cfg.StateDir, Name: m.cfg.hintName(h.rec.ID)}); err != nil && hostRetryable(err) {
		return fmt.Errorf("remove hint record: %w", err)
	}
	m.mu.Lock()
	delete(m.hints, h.rec.ID)
	outcome := "expired"
	h.state = StateFinished
	switch h.rec.Ended {
	case "cancelled":
		h.state, outcome = StateCancelled, "cancelled"
	case "done":
		outcome = "done"
	}
	m.finished = append(m.finished, h)
	if len(m.finished) > keepFinished {
		m.finished = m.finished[len(m.finished)-keepFinished:]
	}
	m.mu.Unlock()
	if h.rec.Implicit {
		for _, f := range h.files {
			m.reactive.ended(f.path, m.now())
		}
	}
	m.metrics.finished.WithLabelValues(outcome).Inc()
	m.log.Info("hint restored", "hint", h.rec.ID, "outcome", outcome, "files", len(h.files))
	return nil
}

func (m *Manager) restoreFile(ctx context.Context, id, p string) error {
	m.mu.Lock()
	tr, ok := m.files[p]
	if !ok {
		m.mu.Unlock()
		return nil
	}
	desired := tr.original
	others := 0
	for hid, t := range tr.hints {
		if hid != id {
			desired = max(desired, t)
			others++
		}
	}
	applied := tr.applied
	m.mu.Unlock()

	forget := func(result string) {
		m.mu.Lock()
		delete(tr.hints, id)
		if len(tr.hints) == 0 {
			delete(m.files, p)
		}
		m.mu.Unlock()
		m.metrics.restores.WithLabelValues(result).Inc()
	}
	if desired != applied {
		st, err := m.host.GetFileStatus(ctx, &nnv1.GetFileStatusRequest{Path: p})
		switch {
		case hostCode(err) == codes.NotFound:
			forget("gone")
			return nil
		case err != nil:
			m.metrics.hostErrors.WithLabelValues("stat").Inc()
			return fmt.Errorf("stat %s: %w", p, err)
		case int(st.Replication) != applied:
			m.log.Info("factor changed by someone else; left as is", "path", p, "now", st.Replication, "we_set", applied)
			m.mu.Lock()
			tr.applied = int(st.Replication)
			m.mu.Unlock()
			if others == 0 {
				m.removeMarker(ctx, p)
			}
			forget("external")
			return nil
		}
		if _, err := m.host.SetReplication(ctx, &nnv1.SetReplicationRequest{Path: p, Replication: int32(desired)}); err != nil {
			if hostCode(err) == codes.NotFound {
				forget("gone")
				return nil
			}
			m.metrics.hostErrors.WithLabelValues("setreplication").Inc()
			return fmt.Errorf("set replication %s to %d: %w", p, desired, err)
		}
		m.mu.Lock()
		tr.applied = desired
		m.mu.Unlock()
	}
	if others == 0 {
		m.removeMarker(ctx, p)
	}
	forget("restored")
	return nil
}

func (m *Manager) removeMarker(ctx context.Context, p string) {
	if _, err := m.host.RemoveXAttr(ctx, &nnv1.RemoveXAttrRequest{Path: p, Name: m.cfg.markerName()}); err != nil {
		m.log.Debug("marker not removed", "path", p, "error", err)
	}
}

// Status reports the progress of a hint the user made (any hint for the superuser).
func (m *Manager) Status(ctx context.Context, id, user string) (*HintStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, err := m.lookup(id, user)
	if err != nil {
		return nil, err
	}
	return h.status(), nil
}

func (m *Manager) lookup(id, user string) (*hint, error) {
	h, ok := m.hints[id]
	if !ok {
		for i := len(m.finished) - 1; i >= 0; i-- {
			if m.finished[i].rec.ID == id {
				h, ok = m.finished[i], true
				break
			}
		}
	}
	if !ok {
		if !m.recovered {
			return nil, ErrRecovering
		}
		return nil, fmt.Errorf("hint %q: %w", id, ErrNotFound)
	}
	if user != h.rec.User && (m.superuser == "" || user != m.superuser) {
		return nil, fmt.Errorf("hint %q belongs to %q: %w", id, h.rec.User, ErrPermission)
	}
	return h, nil
}

// HintStatus is the answer to Status, Extend and Done.
type HintStatus struct {
	ID       string
	State    string
	User     string
	Implicit bool
	Created  time.Time
	ReadyAt  time.Time
	Deadline time.Time
	Files    []FileProgress
}

// FileProgress is one file of a HintStatus.
type FileProgress struct {
	Path     string
	Length   int64
	Original int
	Target   int
	Placed   int
	Ready    bool
}

// Ready reports whether every file has its target replicas.
func (s *HintStatus) Ready() bool { return !s.ReadyAt.IsZero() }

func (h *hint) status() *HintStatus {
	s := &HintStatus{ID: h.rec.ID, State: h.state, User: h.rec.User, Implicit: h.rec.Implicit,
		Created: time.UnixMilli(h.rec.Created), Deadline: time.UnixMilli(h.rec.Until), ReadyAt: h.readyAt}
	for _, f := range h.files {
		placed := f.placed
		if placed == 1<<30 {
			placed = f.target
		}
		s.Files = append(s.Files, FileProgress{Path: f.path, Length: f.length, Original: f.original,
			Target: f.target, Placed: placed, Ready: f.ready})
	}
	return s
}

// Extend moves the end of the hint's window by d.
func (m *Manager) Extend(ctx context.Context, id, user string, d time.Duration) (*HintStatus, error) {
	if d <= 0 {
		return nil, fmt.Errorf("%w: extend by %v: must be positive", ErrInvalid, d)
	}
	m.opMu.Lock()
	defer m.opMu.Unlock()
	m.mu.Lock()
	h, err := m.lookup(id, user)
	if err == nil && (h.state == StateRestoring || h.state == StateFinished || h.state == StateCancelled || h.rec.Ended != "") {
		err = fmt.Errorf("hint %q is %s: %w", id, h.state, ErrFinished)
	}
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	now := m.now()
	until := time.UnixMilli(h.rec.Until).Add(d)
	if until.Sub(now) > m.cfg.MaxDuration {
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: window would end %v from now, beyond the maximum duration %v", ErrInvalid, until.Sub(now).Round(time.Second), m.cfg.MaxDuration)
	}
	rec := h.rec
	rec.Until = until.UnixMilli()
	rec.Files = nil
	for _, f := range h.files {
		rec.Files = append(rec.Files, recFile{Path: f.path, Original: f.original, Target: f.target, Length: f.length})
	}
	m.mu.Unlock()
	if err := m.writeRecord(ctx, &rec); err != nil {
		return nil, err
	}
	m.mu.Lock()
	h.rec.Until = rec.Until
	s := h.status()
	m.mu.Unlock()
	return s, nil
}

// Done ends the hint now and restores its files' factors.
func (m *Manager) Done(ctx context.Context, id, user string, cancel bool) (*HintStatus, error) {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	m.mu.Lock()
	h, err := m.lookup(id, user)
	if err == nil && (h.state == StateFinished || h.state == StateCancelled) {
		s := h.status()
		m.mu.Unlock()
		return s, nil // idempotent
	}
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	rec := h.rec
	rec.Ended = "done"
	if cancel {
		rec.Ended = "cancelled"
	}
	rec.Until = min(rec.Until, m.now().UnixMilli())
	rec.Files = nil
	for _, f := range h.files {
		rec.Files = append(rec.Files, recFile{Path: f.path, Original: f.original, Target: f.target, Length: f.length})
	}
	h.rec.Ended, h.rec.Until = rec.Ended, rec.Until
	m.mu.Unlock()
	// The record is rewritten so a crash before the restore ends still restores at once.
	if err := m.writeRecord(ctx, &rec); err != nil {
		m.log.Warn("hint record not updated; restoring anyway", "hint", id, "error", err)
	}
	if err := m.restore(ctx, h); err != nil {
		m.log.Warn("restore deferred", "hint", id, "error", err)
	}
	if err := m.releaseBoostIfIdle(ctx); err != nil {
		m.log.Warn("replication limits", "error", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return h.status(), nil
}

// List returns the user's active hints (every active hint for the superuser).
func (m *Manager) List(ctx context.Context, user string) []*HintStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*HintStatus
	for _, h := range m.hints {
		if user == h.rec.User || (m.superuser != "" && user == m.superuser) {
			out = append(out, h.status())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out
}

func (m *Manager) writeRecord(ctx context.Context, rec *record) error {
	enc, left, err := fitRecord(rec, m.cfg.hintName(rec.ID), 1<<30)
	if err != nil || len(left) > 0 {
		return fmt.Errorf("encode hint record: %v", err)
	}
	if _, err := m.host.SetXAttr(ctx, &nnv1.SetXAttrRequest{Path: m.cfg.StateDir, Name: m.cfg.hintName(rec.ID), Value: enc}); err != nil {
		m.metrics.hostErrors.WithLabelValues("setxattr").Inc()
		return fmt.Errorf("write hint record: %w: %v", ErrUnavailable, err)
	}
	return nil
}

// recover loads the registry from the state dir's xattrs, restores boosted limits left by a
// crash, and adopts every recorded hint; due ones are restored by the next tick.
func (m *Manager) recover(ctx context.Context) error {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	ns, err := m.host.GetNamesystemState(ctx, &nnv1.GetNamesystemStateRequest{})
	if err != nil {
		return fmt.Errorf("namesystem state: %w", err)
	}
	if !ns.Active || ns.SafeMode {
		return fmt.Errorf("%w: NameNode active=%v safe_mode=%v", ErrUnavailable, ns.Active, ns.SafeMode)
	}
	xa, err := m.host.GetXAttrs(ctx, &nnv1.GetXAttrsRequest{Path: m.cfg.StateDir})
	if err != nil {
		return fmt.Errorf("read registry on %s: %w", m.cfg.StateDir, err)
	}
	if raw, ok := xa.Xattrs[m.cfg.limitsName()]; ok {
		var ls limitsState
		if err := json.Unmarshal(raw, &ls); err != nil {
			m.log.Warn("unreadable limits state; restoring NameNode defaults", "error", err)
		}
		m.boosted = map[string]string{}
		for _, k := range ls.Keys {
			m.boosted[k] = ls.Old[k]
		}
		if err := m.releaseBoost(ctx); err != nil {
			return fmt.Errorf("restore replication limits: %w", err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.superuser = ns.Superuser
	m.live = int(ns.LiveDatanodes)
	adopted := 0
	for name, raw := range xa.Xattrs {
		id := m.cfg.hintIDFromName(name)
		if id == "" || m.hints[id] != nil {
			continue
		}
		rec, err := decodeRecord(raw)
		if err != nil {
			m.log.Error("unreadable hint record left in place", "xattr", name, "error", err)
			continue
		}
		rec.ID = id
		h := &hint{rec: *rec, state: StatePreparing}
		for _, f := range rec.Files {
			tr, ok := m.files[f.Path]
			if !ok {
				tr = &tracked{original: f.Original, applied: f.Original, hints: map[string]int{}}
				m.files[f.Path] = tr
			}
			tr.hints[id] = f.Target
			// What we set is the highest target of the hints holding the file; if the set never
			// happened, the restore sees a different factor and leaves the file alone.
			tr.applied = max(tr.applied, f.Target)
			h.files = append(h.files, &hintFile{path: f.Path, length: f.Length, original: f.Original, target: f.Target})
		}
		m.hints[id] = h
		adopted++
	}
	m.recovered = true
	m.log.Info("hotspot recovered", "hints", adopted, "files", len(m.files))
	return nil
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "h" + hex.EncodeToString(b[:])
}

func hostMessage(err error) string {
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}
