package hotspot

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// fileChange is one change of a file's factor and marker, conditional on the factor this
// manager believes the file has. It is the only way a factor or a marker is written.
type fileChange struct {
	id       int64
	original int
	expect   int            // factor the file must have now (0: do not check)
	want     int            // factor after the change (== expect: leave it)
	hints    map[string]int // marker's hints after the change; empty: remove the marker
}

// request builds the host's form of c. The marker is written before the factor changes, with
// P = the factor before, and rewritten without P after, so a crash in between is recognised
// by recovery (factor == P: the change did not happen). A marker with no hint left is removed
// after the factor is back.
func (m *Manager) request(c fileChange) nnhost.ReplicationChange {
	name := m.cfg.markerName()
	rc := nnhost.ReplicationChange{Path: nnhost.InodePath(c.id), Expect: c.expect}
	moves := c.want != c.expect && c.want > 0
	if moves {
		rc.Replication = c.want
	}
	settled := marker{O: c.original, A: c.want, H: c.hints}
	if settled.H == nil {
		settled.H = map[string]int{}
	}
	switch {
	case len(c.hints) == 0 && !moves:
		rc.RemoveXattr = name
	case len(c.hints) == 0:
		inflight := settled
		inflight.P = c.expect
		rc.SetXattr, rc.XattrValue, rc.RemoveXattr = name, encodeMarker(inflight), name
	case !moves:
		rc.SetXattr, rc.XattrValue = name, encodeMarker(settled)
	default:
		inflight := settled
		inflight.P = c.expect
		rc.SetXattr, rc.XattrValue, rc.FinalXattrValue = name, encodeMarker(inflight), encodeMarker(settled)
	}
	return rc
}

// changeResult is the outcome of one fileChange.
type changeResult struct {
	code   codes.Code
	msg    string
	before int // factor found
}

func (r changeResult) ok() bool { return r.code == codes.OK }

// writeChanges applies one batch (at most batchSize changes) as who: a hint's user (raising
// its files) or nnhost.AsService (restoring what the manager changed, markers of files it lets
// go). Callers hold writeMu. A failed call fails every change of the batch with the call's
// code.
func (m *Manager) writeChanges(ctx context.Context, who nnhost.Caller, changes []fileChange) []changeResult {
	out, _ := m.writeChangesCall(ctx, who, changes)
	return out
}

// writeChangesCall is writeChanges that also returns the error of the call itself (nil when
// the host answered, whatever each change's code).
func (m *Manager) writeChangesCall(ctx context.Context, who nnhost.Caller, changes []fileChange) ([]changeResult, error) {
	out := make([]changeResult, len(changes))
	if len(changes) == 0 {
		return out, nil
	}
	req := make([]nnhost.ReplicationChange, 0, len(changes))
	for _, c := range changes {
		req = append(req, m.request(c))
	}
	callStart := time.Now()
	results, err := m.host.SetReplications(ctx, req, who)
	m.called("set_replications", callStart)
	if err == nil && len(results) != len(changes) {
		err = fmt.Errorf("%d results for %d changes", len(results), len(changes))
	}
	if err != nil {
		m.metrics.hostErrors.WithLabelValues("set_replications").Inc()
		for i := range out {
			out[i] = changeResult{code: hostCode(err), msg: hostMessage(err)}
			if out[i].code == codes.OK {
				out[i].code = codes.Unknown
			}
		}
		return out, err
	}
	for i, r := range results {
		out[i] = changeResult{code: r.Code, msg: r.Message, before: r.Before}
		if r.Code != codes.OK {
			m.metrics.fileErrors.WithLabelValues(r.Code.String()).Inc()
		}
	}
	return out, nil
}

// letGo records that no hint holds file id any more (external change or deleted): every
// hint's entry for it gets result, and its state is forgotten. Callers hold mu.
func (m *Manager) letGo(id int64, result string) {
	delete(m.files, id)
	for _, h := range m.hints {
		for _, f := range h.files {
			if f.id == id && f.held {
				f.held, f.result, f.ready = false, result, true
			}
		}
	}
	m.metrics.restores.WithLabelValues(result).Inc()
}

// releaseExternal removes the markers of files whose factor someone else changed, leaving
// the factor as it is. Callers hold writeMu.
func (m *Manager) releaseExternal(ctx context.Context, ids []int64) {
	for start := 0; start < len(ids); start += batchSize {
		end := min(start+batchSize, len(ids))
		var changes []fileChange
		for _, id := range ids[start:end] {
			changes = append(changes, fileChange{id: id})
		}
		for i, r := range m.writeChanges(ctx, nnhost.AsService, changes) {
			if !r.ok() && r.code != codes.NotFound {
				m.log.Warn("marker of an externally changed file not removed", "file_id", ids[start+i], "error", r.msg)
			}
		}
	}
}
