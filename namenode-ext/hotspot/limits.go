package hotspot

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	nnv1 "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// ensureBoost raises the NameNode's re-replication limits (Config.Boost) unless they are
// raised already. The keys are written to the limits xattr before the first Reconfigure and
// the old values right after, so a crash in between restores them on the next start (to the
// NameNode defaults for a key whose old value was not yet recorded). A limit an admin set
// higher than the boost is put back at once. Callers hold opMu.
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
		resp, err := m.host.Reconfigure(ctx, &nnv1.ReconfigureRequest{Key: b.Key, Value: strconv.Itoa(b.Value)})
		if err != nil {
			m.metrics.hostErrors.WithLabelValues("reconfigure").Inc()
			// Keep what was raised so far recorded; release puts it back.
			_ = m.writeLimits(ctx, &ls)
			return fmt.Errorf("reconfigure %s=%d: %w", b.Key, b.Value, err)
		}
		old := resp.OldValue
		m.boosted[b.Key] = old
		ls.Old[b.Key] = old
		if n, err := strconv.Atoi(old); err == nil && n > b.Value {
			if _, err := m.host.Reconfigure(ctx, &nnv1.ReconfigureRequest{Key: b.Key, Value: old}); err == nil {
				m.log.Info("replication limit already above boost; kept", "key", b.Key, "value", old)
			}
		}
	}
	if err := m.writeLimits(ctx, &ls); err != nil {
		m.log.Warn("old replication limits not recorded", "error", err)
	}
	m.metrics.boosted.Set(1)
	m.log.Info("replication limits boosted", "old", ls.Old)
	return nil
}

// releaseBoost puts the boosted limits back in reverse order and clears the limits xattr.
// Callers hold opMu.
func (m *Manager) releaseBoost(ctx context.Context) error {
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
		if _, err := m.host.Reconfigure(ctx, &nnv1.ReconfigureRequest{Key: k, Value: old}); err != nil {
			m.metrics.hostErrors.WithLabelValues("reconfigure").Inc()
			return fmt.Errorf("restore %s=%q: %w", k, old, err)
		}
		delete(m.boosted, k)
	}
	if _, err := m.host.RemoveXAttr(ctx, &nnv1.RemoveXAttrRequest{Path: m.cfg.StateDir, Name: m.cfg.limitsName()}); err != nil && hostRetryable(err) {
		return fmt.Errorf("clear limits state: %w", err)
	}
	m.boosted = nil
	m.metrics.boosted.Set(0)
	m.log.Info("replication limits restored")
	return nil
}

// releaseBoostIfIdle releases the boost when no hint is being made ready. Callers hold opMu.
func (m *Manager) releaseBoostIfIdle(ctx context.Context) error {
	m.mu.Lock()
	for _, h := range m.hints {
		if h.state == StatePreparing {
			m.mu.Unlock()
			return nil
		}
	}
	m.mu.Unlock()
	return m.releaseBoost(ctx)
}

func (m *Manager) writeLimits(ctx context.Context, ls *limitsState) error {
	b, _ := json.Marshal(ls)
	if _, err := m.host.SetXAttr(ctx, &nnv1.SetXAttrRequest{Path: m.cfg.StateDir, Name: m.cfg.limitsName(), Value: b}); err != nil {
		m.metrics.hostErrors.WithLabelValues("setxattr").Inc()
		return fmt.Errorf("record replication limits: %w", err)
	}
	return nil
}
