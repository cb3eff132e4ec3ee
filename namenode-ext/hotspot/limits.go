package hotspot

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// manageBoost keeps the NameNode's re-replication limits boosted exactly while there is
// copying to do: some preparing hint holds a file short of its target replicas. A boost that
// lasted Config.BoostMaxDuration is put back even if that hint never gets ready (a corrupt or
// unplaceable block, a full cluster); those hints say so in their notes and are not boosted
// again.
func (m *Manager) manageBoost(ctx context.Context) error {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	m.mu.Lock()
	short := 0
	var waiting []*hint
	for _, h := range m.hints {
		if h.state != StatePreparing || h.rec.Ended != "" || h.boostExpired {
			continue
		}
		n := 0
		for _, f := range h.files {
			if f.held && !f.ready {
				n++
			}
		}
		if n > 0 {
			short += n
			waiting = append(waiting, h)
		}
	}
	m.mu.Unlock()
	now := m.now()
	switch {
	case short > 0 && m.boosted != nil && m.cfg.BoostMaxDuration > 0 && now.Sub(m.boostSince) >= m.cfg.BoostMaxDuration:
		reason := fmt.Sprintf("replication limits put back after %v (newtricks.hotspot.boost.max-duration) with %d files still short of their target: a corrupt or unplaceable block, or a full cluster?",
			m.cfg.BoostMaxDuration, short)
		m.mu.Lock()
		for _, h := range waiting {
			h.boostExpired = true
			h.notes = append(h.notes, reason)
		}
		m.mu.Unlock()
		m.log.Warn("replication limits released before the hints were ready", "files_short", short, "after", m.cfg.BoostMaxDuration)
		return m.releaseBoost(ctx, reason)
	case short > 0:
		return m.ensureBoost(ctx)
	default:
		return m.releaseBoost(ctx, "")
	}
}

// ensureBoost raises the NameNode's re-replication limits (Config.Boost) unless they are
// raised already. The keys are written to the limits xattr before the first Reconfigure and
// the old values right after, so a crash in between restores them on the next start (to the
// NameNode defaults for a key whose old value was not yet recorded). A limit an admin set
// higher than the boost is put back at once. Callers hold writeMu.
func (m *Manager) ensureBoost(ctx context.Context) error {
	if m.boosted != nil || len(m.cfg.Boost) == 0 {
		return nil
	}
	ls := limitsState{Old: map[string]string{}}
	for _, b := range m.cfg.Boost {
		ls.Keys = append(ls.Keys, b.Key)
	}
	if err := m.writeLimits(ctx, &ls); err != nil {
		return err
	}
	m.boosted = map[string]string{}
	for _, b := range m.cfg.Boost {
		old, err := m.host.Reconfigure(ctx, b.Key, strconv.Itoa(b.Value))
		if err != nil {
			m.metrics.hostErrors.WithLabelValues("reconfigure").Inc()
			// Keep what was raised so far recorded; release puts it back.
			_ = m.writeLimits(ctx, &ls)
			return fmt.Errorf("reconfigure %s=%d: %w", b.Key, b.Value, err)
		}
		m.boosted[b.Key] = old
		ls.Old[b.Key] = old
		if n, err := strconv.Atoi(old); err == nil && n > b.Value {
			if _, err := m.host.Reconfigure(ctx, b.Key, old); err == nil {
				m.log.Info("replication limit already above boost; kept", "key", b.Key, "value", old)
			}
		}
	}
	if err := m.writeLimits(ctx, &ls); err != nil {
		m.log.Warn("old replication limits not recorded", "error", err)
	}
	m.boostSince = m.now()
	m.metrics.boosted.Set(1)
	m.log.Info("replication limits boosted", "old", ls.Old)
	return nil
}

// releaseBoost puts the boosted limits back in reverse order and clears the limits xattr.
// Callers hold writeMu.
func (m *Manager) releaseBoost(ctx context.Context, reason string) error {
	if m.boosted == nil {
		return nil
	}
	keys := make([]string, 0, len(m.cfg.Boost))
	for _, b := range m.cfg.Boost {
		keys = append(keys, b.Key)
	}
	for k := range m.boosted {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Reverse(keys)
	for _, k := range keys {
		old, ok := m.boosted[k]
		if !ok {
			continue
		}
		if _, err := m.host.Reconfigure(ctx, k, old); err != nil {
			m.metrics.hostErrors.WithLabelValues("reconfigure").Inc()
			return fmt.Errorf("restore %s=%q: %w", k, old, err)
		}
		delete(m.boosted, k)
	}
	if err := m.host.RemoveXAttr(ctx, m.cfg.StateDir, m.cfg.limitsName(), nnhost.AsService); err != nil && hostRetryable(err) {
		return fmt.Errorf("clear limits state: %w", err)
	}
	m.boosted = nil
	m.metrics.boosted.Set(0)
	m.log.Info("replication limits restored", "reason", reason)
	return nil
}

func (m *Manager) writeLimits(ctx context.Context, ls *limitsState) error {
	b, _ := json.Marshal(ls)
	if err := m.host.SetXAttr(ctx, m.cfg.StateDir, m.cfg.limitsName(), b, nnhost.AsService); err != nil {
		m.metrics.hostErrors.WithLabelValues("setxattr").Inc()
		return fmt.Errorf("record replication limits: %w", err)
	}
	return nil
}
