package hotspot

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"

	nnv1 "github.com/newtricks/newtricks/proto/gen/newtricksv1"
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
func (m *Manager) request(c fileChange) *nnv1.ReplicationChange {
	name := m.cfg.markerName()
	rc := &nnv1.ReplicationChange{Path: inodePath(c.id), Expect: int32(c.expect)}
	moves := c.want != c.expect && c.want > 0
	if moves {
		rc.Replication = int32(c.want)
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

// caller says whom a host call acts as (host.proto): a hint's user (raising its files) or the
// manager itself (restoring what it changed, markers of files it lets go, its records and the
// NameNode limits it tunes). There is no default: a zero caller is refused by the host.
type caller struct {
	user    string
	service bool
}

// asService is the manager acting on its own behalf; asUser(u) acts as u with u's rights.
var asService = caller{service: true}

func asUser(u string) caller { return caller{user: u} }

// writeChanges applies one batch (at most batchSize changes) as who. Callers hold writeMu. A
// failed call fails every change of the batch with the call's code.
func (m *Manager) writeChanges(ctx context.Context, who caller, changes []fileChange) []changeResult {
	out := make([]changeResult, len(changes))
	if len(changes) == 0 {
		return out
	}
	req := &nnv1.SetReplicationsRequest{User: who.user, Service: who.service}
	for _, c := range changes {
		req.Changes = append(req.Changes, m.request(c))
	}
	callStart := time.Now()
	resp, err := m.host.SetReplications(ctx, req)
	m.called("set_replications", callStart)
	if err == nil && len(resp.Results) != len(changes) {
		err = fmt.Errorf("%d results for %d changes", len(resp.Results), len(changes))
	}
	if err != nil {
		m.metrics.hostErrors.WithLabelValues("set_replications").Inc()
		for i := range out {
			out[i] = changeResult{code: hostCode(err), msg: hostMessage(err)}
			if out[i].code == codes.OK {
				out[i].code = codes.Unknown
			}
		}
		return out
	}
	for i, r := range resp.Results {
		out[i] = changeResult{code: codes.Code(r.Code), msg: r.Message, before: int(r.Before)}
		if r.Code != 0 {
			m.metrics.fileErrors.WithLabelValues(codes.Code(r.Code).String()).Inc()
		}
	}
	return out
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
		for i, r := range m.writeChanges(ctx, asService, changes) {
			if !r.ok() && r.code != codes.NotFound {
				m.log.Warn("marker of an externally changed file not removed", "file_id", ids[start+i], "error", r.msg)
			}
		}
	}
}
