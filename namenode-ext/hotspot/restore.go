package hotspot

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// restore ends h: each file it holds goes back to the highest target of the other hints
// holding it, or to its original factor, conditional on the factor being the one this
// manager set (one set by someone else meanwhile is left alone, and every hint lets go of the
// file). Files are restored in batches; a file that fails keeps its error in status and is
// retried on the next tick without holding back the others. The hint record is removed once
// every file was let go.
func (m *Manager) restore(ctx context.Context, h *hint) error {
	m.mu.Lock()
	if h.state == StateFinished || h.state == StateCancelled {
		m.mu.Unlock()
		return nil
	}
	h.state = StateRestoring
	var todo []*hintFile
	for _, f := range h.files {
		if f.held {
			todo = append(todo, f)
		}
	}
	m.mu.Unlock()

	failed := 0
	for start := 0; start < len(todo); start += batchSize {
		end := min(start+batchSize, len(todo))
		m.writeMu.Lock()
		m.mu.Lock()
		var changes []fileChange
		var batch []*hintFile
		for _, f := range todo[start:end] {
			fs := m.files[f.id]
			if !f.held {
				continue // let go meanwhile (external, deleted)
			}
			if fs == nil {
				f.held, f.result = false, ResultRestored
				continue
			}
			if _, ok := fs.hints[h.rec.ID]; !ok {
				f.held, f.result = false, ResultRestored
				continue
			}
			c := fileChange{id: f.id, original: fs.original, expect: fs.applied, want: fs.want(h.rec.ID), hints: map[string]int{}}
			for k, v := range fs.hints {
				if k != h.rec.ID {
					c.hints[k] = v
				}
			}
			changes = append(changes, c)
			batch = append(batch, f)
		}
		m.mu.Unlock()
		results := m.writeChanges(ctx, nnhost.AsService, changes)
		var external []int64
		m.mu.Lock()
		for k, r := range results {
			c, f := changes[k], batch[k]
			switch {
			case r.ok():
				if len(c.hints) == 0 {
					delete(m.files, c.id)
				} else if fs := m.files[c.id]; fs != nil {
					fs.applied, fs.hints = c.want, c.hints
				}
				f.held, f.result, f.err = false, ResultRestored, ""
				m.metrics.restores.WithLabelValues(ResultRestored).Inc()
			case r.code == codes.Aborted:
				m.log.Info("factor changed by someone else; left as is", "hint", h.rec.ID, "path", f.path,
					"now", r.before, "we_set", c.expect)
				m.letGo(c.id, ResultExternal)
				external = append(external, c.id)
			case r.code == codes.NotFound:
				m.letGo(c.id, ResultGone)
			default:
				f.err = r.msg
				failed++
			}
		}
		m.mu.Unlock()
		m.releaseExternal(ctx, external)
		m.writeMu.Unlock()
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d files not restored yet (retried)", failed, len(todo))
	}

	m.writeMu.Lock()
	callStart := time.Now()
	err := m.host.RemoveXAttr(ctx, m.cfg.StateDir, m.cfg.hintName(h.rec.ID), nnhost.AsService)
	m.called("remove_xattr", callStart)
	m.writeMu.Unlock()
	if err != nil && hostRetryable(err) {
		return fmt.Errorf("remove hint record: %w", err)
	}
	m.mu.Lock()
	if m.hints[h.rec.ID] != h {
		m.mu.Unlock()
		return nil // finished by a concurrent restore
	}
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
