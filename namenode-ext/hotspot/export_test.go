package hotspot

import (
	"context"
	"time"

	"github.com/newtricks/newtricks/namenode-ext/nnhosttest"
)

var _ Host = (*nnhosttest.FakeHost)(nil)

// Hooks into the Manager for tests that drive time and the background loop by hand.
func SetClock(m *Manager, now func() time.Time)     { m.now = now }
func Tick(m *Manager, ctx context.Context)          { m.tick(ctx) }
func Recover(m *Manager, ctx context.Context) error { return m.recover(ctx) }
func DrainImplicit(m *Manager, ctx context.Context) int {
	n := 0
	for {
		select {
		case p := <-m.implicit:
			m.createImplicit(ctx, p)
			n++
		default:
			return n
		}
	}
}
