package hotspot

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

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
	Notes    []string
}

// FileProgress is one file of a HintStatus.
type FileProgress struct {
	ID       int64
	Path     string
	Length   int64
	Original int
	Target   int
	Placed   int
	Ready    bool
	Result   string // Result*, once the hint let go of the file; "" while held
	Error    string // last error (retried)
}

// Ready reports whether every file has its target replicas.
func (s *HintStatus) Ready() bool { return !s.ReadyAt.IsZero() }

// status snapshots h. Callers hold mu.
func (h *hint) status() *HintStatus {
	s := &HintStatus{ID: h.rec.ID, State: h.state, User: h.rec.User, Implicit: h.rec.Implicit,
		Created: time.UnixMilli(h.rec.Created), Deadline: time.UnixMilli(h.rec.Until), ReadyAt: h.readyAt,
		Notes: append([]string(nil), h.notes...)}
	for _, f := range h.files {
		target := f.target
		if target == 0 {
			target = f.original
		}
		s.Files = append(s.Files, FileProgress{ID: f.id, Path: f.path, Length: f.length, Original: f.original,
			Target: target, Placed: f.placed, Ready: f.ready, Result: f.result, Error: f.err})
	}
	return s
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

// lookup finds an active or recently finished hint the user may see. Callers hold mu.
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

// Extend moves the end of the hint's window by d.
func (m *Manager) Extend(ctx context.Context, id, user string, d time.Duration) (*HintStatus, error) {
	if d <= 0 {
		return nil, fmt.Errorf("%w: extend by %v: must be positive", ErrInvalid, d)
	}
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
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
	rec := h.recordLocked()
	rec.Until = until.UnixMilli()
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
	m.writeMu.Lock()
	m.mu.Lock()
	h, err := m.lookup(id, user)
	if err == nil && (h.state == StateFinished || h.state == StateCancelled) {
		s := h.status()
		m.mu.Unlock()
		m.writeMu.Unlock()
		return s, nil // idempotent
	}
	if err != nil {
		m.mu.Unlock()
		m.writeMu.Unlock()
		return nil, err
	}
	if h.rec.Ended == "" {
		h.rec.Ended = "done"
		if cancel {
			h.rec.Ended = "cancelled"
		}
		h.rec.Until = min(h.rec.Until, m.now().UnixMilli())
	}
	rec := h.recordLocked()
	m.mu.Unlock()
	// The record is rewritten so a crash before the restore ends still restores at once.
	if err := m.writeRecord(ctx, &rec); err != nil {
		m.log.Warn("hint record not updated; restoring anyway", "hint", id, "error", err)
	}
	m.writeMu.Unlock()
	if err := m.restore(ctx, h); err != nil {
		m.log.Warn("restore deferred", "hint", id, "error", err)
	}
	if err := m.manageBoost(ctx); err != nil {
		m.log.Warn("replication limits", "error", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return h.status(), nil
}

// List returns the user's active hints (every active hint for the superuser), and for the
// superuser the state recovery could not use.
func (m *Manager) List(ctx context.Context, user string) ([]*HintStatus, []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*HintStatus
	su := m.superuser != "" && user == m.superuser
	for _, h := range m.hints {
		if user == h.rec.User || su {
			out = append(out, h.status())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	var problems []string
	if su {
		problems = append(problems, m.problems...)
	}
	return out, problems
}

// recordLocked is h's durable form: every file it was planned with. Callers hold mu.
func (h *hint) recordLocked() record {
	rec := h.rec
	rec.Files = make([]recFile, 0, len(h.files))
	for _, f := range h.files {
		rec.Files = append(rec.Files, recFile{ID: f.id, Target: max(f.target, 0), Original: max(f.original, 0)})
	}
	return rec
}

// writeRecord writes a hint record. Callers hold writeMu.
func (m *Manager) writeRecord(ctx context.Context, rec *record) error {
	enc, err := encodeRecord(rec)
	if err != nil {
		return fmt.Errorf("encode hint record: %w", err)
	}
	callStart := time.Now()
	err = m.host.SetXAttr(ctx, m.cfg.StateDir, m.cfg.hintName(rec.ID), enc, nnhost.AsService)
	m.called("set_xattr", callStart)
	if err != nil {
		m.metrics.hostErrors.WithLabelValues("set_xattr").Inc()
		return fmt.Errorf("write hint record: %w: %v", ErrUnavailable, err)
	}
	return nil
}
