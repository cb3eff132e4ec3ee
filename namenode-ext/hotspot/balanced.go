package hotspot

import (
	"context"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// pushBalanced tells the NameNode hook which paths are hot (the held files of preparing and
// ready hints, by their current path), so io.newtricks.hadoop.BalancedReads spreads their
// readers evenly over the replicas when it is installed. It is sent only when the set
// changes; a hook that does not know the call is not asked again.
func (m *Manager) pushBalanced(ctx context.Context) {
	m.mu.Lock()
	if m.balancedOff {
		m.mu.Unlock()
		return
	}
	var paths []string
	for _, h := range m.hints {
		if h.state != StatePreparing && h.state != StateReady {
			continue
		}
		for _, f := range h.files {
			if f.held && f.path != "" {
				paths = append(paths, f.path)
			}
		}
	}
	sort.Strings(paths)
	paths = compactStrings(paths)
	key := strings.Join(paths, "\x00")
	same := key == m.balancedKey
	m.mu.Unlock()
	if same {
		return
	}
	callStart := time.Now()
	topology, err := m.host.SetBalancedReads(ctx, paths)
	m.called("set_balanced_reads", callStart)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case hostCode(err) == codes.Unimplemented:
		m.balancedOff = true
		m.log.Info("NameNode hook has no balanced reads; readers keep Hadoop's shuffle")
	case err != nil:
		m.metrics.hostErrors.WithLabelValues("set_balanced_reads").Inc()
	default:
		m.balancedKey = key
		if len(paths) > 0 && !topology {
			m.log.Debug("balanced reads topology not installed (dfs.net.topology.impl); readers keep Hadoop's shuffle")
		}
	}
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
