package hotspot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

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

const noteAlreadyHigh = "already at or above the target factor"

// recordSlack is kept free in a new record's budget so that Extend and Done, which add a few
// header bytes, always fit.
const recordSlack = 64

func (m *Manager) create(ctx context.Context, req Request, implicit bool) (*Plan, error) {
	// A dry run plans as a hint does (expansion, access checks, quotas: the same NameNode
	// work), so it counts against the same caps while it runs.
	m.mu.Lock()
	recovered, active := m.recovered, len(m.hints)+m.creating
	mine := m.creatingBy[req.User]
	for _, h := range m.hints {
		if h.rec.User == req.User && !h.rec.Implicit {
			mine++
		}
	}
	perUser := !implicit && mine >= m.cfg.MaxActiveHintsPerUser
	if recovered && active < m.cfg.MaxActiveHints && !perUser {
		m.creating++
		if m.creatingBy == nil {
			m.creatingBy = map[string]int{}
		}
		if !implicit {
			m.creatingBy[req.User]++
		}
		defer func() {
			m.mu.Lock()
			m.creating--
			if !implicit {
				if m.creatingBy[req.User]--; m.creatingBy[req.User] <= 0 {
					delete(m.creatingBy, req.User)
				}
			}
			m.mu.Unlock()
		}()
	}
	m.mu.Unlock()
	if !recovered {
		return nil, ErrRecovering
	}
	if active >= m.cfg.MaxActiveHints {
		return nil, fmt.Errorf("%w: %d active, at most %d (newtricks.hotspot.max-active-hints)", ErrTooManyHints, active, m.cfg.MaxActiveHints)
	}
	if perUser {
		m.metrics.quotaRefused.Inc()
		return nil, fmt.Errorf("%w: %s has %d hints (dry runs under way included), at most %d per user (newtricks.hotspot.max-active-hints.per-user)",
			ErrTooManyHints, req.User, mine, m.cfg.MaxActiveHintsPerUser)
	}
	ns, err := m.host.GetNamesystemState(ctx)
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
		// Reactive hints act as the configured service user, with its rights only.
		hostUser = m.cfg.ReactiveUser
	}

	ex, err := m.expand(ctx, req.Paths, hostUser, m.cfg.MaxFiles)
	if err != nil {
		return nil, err
	}
	skipped := ex.skipped
	var cands []*nnhost.FileStatus
	for _, st := range ex.files {
		if st.Replication < 1 {
			skipped = append(skipped, Skipped{st.Path, SkipErasureCoded, "erasure-coded or replication unknown; not replicated by factor"})
			continue
		}
		if st.FileID <= 0 {
			skipped = append(skipped, Skipped{st.Path, SkipHostError, "the host gave no inode id"})
			continue
		}
		cands = append(cands, st)
	}
	var denied []Skipped
	cands, denied, err = m.checkWrite(ctx, cands, hostUser)
	if err != nil {
		return nil, err
	}
	skipped = append(skipped, denied...)

	rep, err := m.host.GetDatanodeReport(ctx)
	if err != nil {
		return nil, fmt.Errorf("datanode report: %w: %v", ErrUnavailable, err)
	}
	var maxBlock int64
	for _, st := range cands {
		maxBlock = max(maxBlock, st.BlockSize)
	}
	load := loadOf(rep, m.cfg.BusyXceivers, 4*maxBlock)
	if err := m.placement(ctx, cands, rep, &load); err != nil {
		return nil, err
	}
	m.mu.Lock()
	load.InFlightBytes = m.bytesInFlightLocked()
	m.mu.Unlock()
	factor := m.cfg.PlanFactor(req.Readers, req.Replication, load)

	m.mu.Lock()
	var files []FilePlan
	blockSize := map[string]int64{}
	for _, st := range cands {
		cur := st.Replication
		fp := FilePlan{ID: st.FileID, Path: st.Path, Length: st.Length, Original: cur, Current: cur, Target: factor.Target}
		if fs, ok := m.files[st.FileID]; ok {
			// Held by another hint: this hint's own target is measured against the true
			// original, so it does not inherit the other hint's factor.
			fp.Original = fs.original
		}
		if fp.Target <= fp.Original {
			fp.Target = fp.Original
			fp.Note = noteAlreadyHigh
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
		return nil, nothingPlanned(skipped)
	}

	rec := record{V: recordVersion, User: req.User, Created: now.UnixMilli(), HotFrom: plan.HotFrom.UnixMilli(),
		Until: plan.Deadline.UnixMilli(), Readers: req.Readers, Implicit: implicit}
	if implicit {
		rec.User = hostUser
	}
	if !req.DryRun {
		rec.ID = newID()
		for _, f := range files {
			rec.Files = append(rec.Files, recFile{ID: f.ID, Target: f.Target, Original: f.Original})
		}
		_, left, err := fitRecord(&rec, m.cfg.hintName(rec.ID), m.cfg.MaxXAttrBytes-recordSlack)
		if err != nil {
			return nil, fmt.Errorf("encode hint record: %w", err)
		}
		if len(left) > 0 {
			keep := map[int64]bool{}
			for _, f := range rec.Files {
				keep[f.ID] = true
			}
			var kept []FilePlan
			for _, f := range files {
				if keep[f.ID] {
					kept = append(kept, f)
				} else {
					skipped = append(skipped, Skipped{f.Path, SkipStateBudget,
						"hint record full (newtricks.hotspot.state.max-xattr-bytes); send the rest in another hint"})
				}
			}
			files = kept
		}
		if len(files) == 0 {
			return nil, nothingPlanned(skipped)
		}
		// The record goes first: from here on every change is found again by recovery.
		m.writeMu.Lock()
		err = m.writeRecord(ctx, &rec)
		m.writeMu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("on %s: %w", m.cfg.StateDir, err)
		}
	}

	plan.HintID = rec.ID
	plan.Files = files
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
		m.finishPlan(plan, files, blockSize, load, now)
		return plan, nil
	}

	h := &hint{rec: rec, state: StatePreparing, raising: true}
	for _, f := range files {
		h.files = append(h.files, &hintFile{id: f.ID, path: f.Path, length: f.Length, original: f.Original, target: f.Target})
	}
	m.mu.Lock()
	m.hints[rec.ID] = h
	m.mu.Unlock()
	kind := "explicit"
	if implicit {
		kind = "implicit"
	}
	m.metrics.created.WithLabelValues(kind).Inc()

	m.raise(ctx, h, files)
	m.mu.Lock()
	for i := range plan.Files {
		f, hf := &plan.Files[i], h.files[i]
		switch {
		case hf.held:
		case f.Target > f.Original || hf.result != "":
			f.Note = "not raised: " + hf.result
			if hf.err != "" {
				f.Note = "not raised: " + hf.err
			}
			f.Target = f.Current
			hf.target = 0
			plan.Partial = true
		}
		if hf.result == "" && !hf.held {
			hf.result, hf.ready = ResultNotHeld, true
		}
	}
	h.raising = false
	m.reindexLocked()
	m.mu.Unlock()
	m.finishPlan(plan, plan.Files, blockSize, load, now)
	m.metrics.bytesPlanned.Add(float64(plan.BytesToCopy))
	m.log.Info("hint created", "hint", rec.ID, "user", rec.User, "files", len(files), "target", factor.Target,
		"bytes_to_copy", plan.BytesToCopy, "until", plan.Deadline.UTC().Format(time.RFC3339), "implicit", implicit)
	if plan.BytesToCopy > 0 {
		if err := m.manageBoost(ctx); err != nil {
			m.log.Warn("boosting replication limits", "error", err)
		}
	}
	return plan, nil
}

func (m *Manager) finishPlan(plan *Plan, files []FilePlan, blockSize map[string]int64, load ClusterLoad, now time.Time) {
	plan.BytesToCopy = 0
	for _, f := range files {
		if f.Target > f.Current {
			plan.BytesToCopy += int64(f.Target-f.Current) * f.Length
		}
		if f.Note != "" && f.Note != noteAlreadyHigh {
			plan.Partial = true
		}
	}
	plan.EstimatedReady = now.Add(m.cfg.estimateReady(files, blockSize, load.Live))
}

// raise adds h's target to the marker of each of its files and raises the factor to the
// highest target holding the file, in batches. A file whose factor is no longer the one
// planned (or set by this manager) was changed by someone else: it is left alone, and let go
// by every hint holding it. A file that fails keeps its factor and is not held by h.
func (m *Manager) raise(ctx context.Context, h *hint, plans []FilePlan) {
	for start := 0; start < len(h.files); start += batchSize {
		end := min(start+batchSize, len(h.files))
		m.writeMu.Lock()
		m.mu.Lock()
		if h.rec.Ended != "" {
			m.mu.Unlock()
			m.writeMu.Unlock()
			return
		}
		var changes []fileChange
		var idx []int
		for i := start; i < end; i++ {
			f, p := h.files[i], plans[i]
			if p.Target <= p.Original {
				continue // nothing this hint wants beyond what the file has
			}
			fs := m.files[f.id]
			c := fileChange{id: f.id, original: p.Original, expect: p.Current, hints: map[string]int{}}
			if fs != nil {
				c.original, c.expect = fs.original, fs.applied
				for k, v := range fs.hints {
					c.hints[k] = v
				}
			}
			c.hints[h.rec.ID] = f.target
			c.want = (&fileState{original: c.original, hints: c.hints}).want("")
			changes = append(changes, c)
			idx = append(idx, i)
		}
		m.mu.Unlock()
		results := m.writeChanges(ctx, nnhost.AsUser(h.rec.User), changes)
		var external []int64
		m.mu.Lock()
		for k, r := range results {
			c, f := changes[k], h.files[idx[k]]
			fs := m.files[c.id]
			switch {
			case r.ok():
				if fs == nil {
					fs = &fileState{original: c.original}
					m.files[c.id] = fs
				}
				fs.applied, fs.hints, f.held = c.want, c.hints, true
			case r.code == codes.Aborted:
				f.result, f.err, f.ready = ResultExternal, "factor changed by someone else: "+r.msg, true
				if fs != nil {
					m.letGo(c.id, ResultExternal)
					external = append(external, c.id)
				}
			case r.code == codes.NotFound:
				f.result, f.ready = ResultGone, true
				if fs != nil {
					m.letGo(c.id, ResultGone)
				}
			default:
				f.err = r.msg
				m.log.Warn("raise failed", "hint", h.rec.ID, "path", f.path, "code", r.code, "error", r.msg)
			}
		}
		m.mu.Unlock()
		m.releaseExternal(ctx, external)
		m.writeMu.Unlock()
	}
}

// checkWrite keeps the files user may change (ClientProtocol.checkAccess WRITE as the user,
// in batches); the others become skipped entries.
func (m *Manager) checkWrite(ctx context.Context, files []*nnhost.FileStatus, user string) ([]*nnhost.FileStatus, []Skipped, error) {
	var kept []*nnhost.FileStatus
	var skipped []Skipped
	for start := 0; start < len(files); start += batchSize {
		end := min(start+batchSize, len(files))
		var paths []string
		for _, st := range files[start:end] {
			paths = append(paths, st.Path)
		}
		callStart := time.Now()
		results, err := m.host.CheckAccess(ctx, paths, "WRITE", nnhost.AsUser(user))
		m.called("check_access", callStart)
		if err == nil && len(results) != end-start {
			err = fmt.Errorf("access: %w (a NameNode hook without the batch form?)", errShortAnswer)
		}
		if err != nil {
			if terr := m.transient("access", err); terr != nil {
				return nil, nil, terr
			}
			return nil, nil, fmt.Errorf("access: %w: %v", ErrUnavailable, err)
		}
		for i, r := range results {
			st := files[start+i]
			if r.Code == codes.OK {
				kept = append(kept, st)
				continue
			}
			if s := m.skipFor(st.Path, status.Error(r.Code, r.Message)); s != nil {
				skipped = append(skipped, *s)
			}
		}
	}
	return kept, skipped, nil
}

// fitQuotas reads the space quota of every quota'd ancestor of the files that grow (one
// GetQuotaUsage call per batch of paths, O(depth) each) and lowers the targets to fit.
func (m *Manager) fitQuotas(ctx context.Context, files []FilePlan) ([]FilePlan, []Skipped, error) {
	var paths []string
	for _, f := range files {
		if f.Target > f.Current {
			paths = append(paths, f.Path)
		}
	}
	quotas := map[string]int64{}
	for start := 0; start < len(paths); start += batchSize {
		end := min(start+batchSize, len(paths))
		callStart := time.Now()
		dirs, err := m.host.GetQuotaUsage(ctx, paths[start:end])
		m.called("get_quota_usage", callStart)
		if err != nil {
			if terr := m.transient("quota usage", err); terr != nil {
				return nil, nil, terr
			}
			return nil, nil, fmt.Errorf("quota usage: %w: %v", ErrUnavailable, err)
		}
		for _, d := range dirs {
			if d.SpaceQuota >= 0 {
				quotas[d.Path] = d.SpaceQuota - d.SpaceConsumed
			}
		}
	}
	kept, skipped := applyQuota(files, quotas)
	return kept, skipped, nil
}

// bytesInFlightLocked is the bytes of extra replicas other preparing hints still wait for.
func (m *Manager) bytesInFlightLocked() int64 {
	var b int64
	for _, h := range m.hints {
		if h.state != StatePreparing {
			continue
		}
		for _, f := range h.files {
			if f.held && !f.ready {
				b += int64(max(0, f.target-f.placed)) * f.length
			}
		}
	}
	return b
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

// loadOf summarises the DataNode report: live in-service nodes, their mean load, and the
// eligible ones (below busyXceivers, with minFree bytes left) and their free space.
func loadOf(rep nnhost.DatanodeReport, busyXceivers float64, minFree int64) ClusterLoad {
	var l ClusterLoad
	var x int64
	for _, d := range rep.Live {
		if !inService(d) {
			continue
		}
		l.Live++
		x += int64(d.Xceivers)
		if float64(d.Xceivers) < busyXceivers && (d.Capacity == 0 || d.Remaining >= minFree) {
			l.Eligible++
			l.FreeBytes += d.Remaining
		}
	}
	if l.Live > 0 {
		l.AvgXceivers = float64(x) / float64(l.Live)
	}
	l.Pending = rep.PendingReconstruction + rep.UnderReplicated
	return l
}

func inService(d nnhost.DatanodeLoad) bool {
	return d.AdminState == "" || d.AdminState == "NORMAL" || d.AdminState == "IN_SERVICE"
}

// placement fills in the hot bytes, the lowest current factor and the concentration of the
// files on their current holders (InspectFiles with holders, in batches): the share of the
// hot bytes the busiest in-service holder has a replica of. A file counts fully for each of
// its holders, an upper bound when its blocks sit on different nodes.
func (m *Manager) placement(ctx context.Context, files []*nnhost.FileStatus, rep nnhost.DatanodeReport, load *ClusterLoad) error {
	live := map[string]bool{}
	for _, d := range rep.Live {
		if inService(d) {
			live[d.UUID] = true
		}
	}
	perNode := map[string]int64{}
	for _, st := range files {
		load.HotBytes += st.Length
		if st.BlockSize > 0 {
			load.HotBlocks += int((st.Length + st.BlockSize - 1) / st.BlockSize)
		}
		if load.BaseFactor == 0 || st.Replication < load.BaseFactor {
			load.BaseFactor = st.Replication
		}
	}
	for start := 0; start < len(files); start += batchSize {
		end := min(start+batchSize, len(files))
		req := nnhost.InspectRequest{Holders: true}
		for _, st := range files[start:end] {
			req.FileIDs = append(req.FileIDs, st.FileID)
		}
		callStart := time.Now()
		insp, err := m.host.InspectFiles(ctx, req)
		m.called("inspect_files", callStart)
		if err == nil && len(insp) != end-start {
			err = errShortAnswer
		}
		if err != nil {
			if terr := m.transient("placement", err); terr != nil {
				return terr
			}
			return fmt.Errorf("placement: %w: %v", ErrUnavailable, err)
		}
		for i, fi := range insp {
			for _, u := range fi.Holders {
				if live[u] {
					perNode[u] += files[start+i].Length
				}
			}
		}
	}
	var top int64
	for _, b := range perNode {
		top = max(top, b)
	}
	if load.HotBytes > 0 && top > 0 {
		load.Concentration = float64(top) / float64(load.HotBytes)
	}
	return nil
}
