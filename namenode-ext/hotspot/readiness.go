package hotspot

import (
	"context"
	"sort"
	"time"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// probe is one file whose readiness a tick looks at.
type probe struct {
	h    *hint
	f    *hintFile
	want int
}

// trackReadiness counts the live replicas of the files of preparing hints that are not ready
// yet, in batches of InspectFiles by inode id. Each file is looked at from its first block
// that was short at the last look, so a poll costs the blocks still short. It holds no lock
// across a host call.
func (m *Manager) trackReadiness(ctx context.Context) {
	m.mu.Lock()
	var work []*hint
	for _, h := range m.hints {
		if h.state == StatePreparing && h.rec.Ended == "" && !h.raising {
			work = append(work, h)
		}
	}
	sort.Slice(work, func(i, j int) bool { return work[i].rec.Created < work[j].rec.Created })
	live := m.live
	var probes []probe
	for _, h := range work {
		for _, f := range h.files {
			if f.ready || !f.held {
				continue
			}
			if len(probes) == maxInspectPerTick {
				break
			}
			want := f.target
			if live > 0 {
				want = min(want, live)
			}
			probes = append(probes, probe{h, f, want})
		}
	}
	m.mu.Unlock()

	for start := 0; start < len(probes); start += batchSize {
		end := min(start+batchSize, len(probes))
		var req nnhost.InspectRequest
		for _, p := range probes[start:end] {
			req.FileIDs = append(req.FileIDs, p.f.id)
			req.Want = append(req.Want, p.want)
			req.FromBlock = append(req.FromBlock, p.f.firstShort)
		}
		callStart := time.Now()
		insp, err := m.host.InspectFiles(ctx, req)
		m.called("inspect_files", callStart)
		if err == nil && len(insp) != len(req.FileIDs) {
			err = errShortAnswer
		}
		if err != nil {
			m.metrics.hostErrors.WithLabelValues("inspect_files").Inc()
			m.log.Debug("readiness poll failed", "error", err)
			return
		}
		m.mu.Lock()
		for i, fi := range insp {
			p := probes[start+i]
			if !fi.Exists {
				// Deleted: nothing to wait for; the restore lets it go.
				p.f.ready, p.f.placed = true, 0
				continue
			}
			if fi.Path != "" {
				p.f.path = fi.Path
			}
			p.f.firstShort = fi.FirstShortBlock
			switch {
			case fi.Blocks == 0 || fi.FirstShortBlock >= fi.Blocks:
				p.f.ready = true
				p.f.placed = max(p.f.placed, p.want)
			default:
				p.f.placed = fi.MinLiveReplicas
			}
		}
		m.mu.Unlock()
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range work {
		if h.state != StatePreparing || h.raising {
			continue
		}
		all := true
		for _, f := range h.files {
			if !f.ready && f.held {
				all = false
				break
			}
		}
		if all {
			h.state = StateReady
			h.readyAt = m.now()
			after := h.readyAt.Sub(time.UnixMilli(h.rec.Created))
			m.metrics.readySeconds.Observe(after.Seconds())
			m.log.Info("hint ready", "hint", h.rec.ID, "files", len(h.files), "after", after.Round(time.Millisecond))
		}
	}
}
