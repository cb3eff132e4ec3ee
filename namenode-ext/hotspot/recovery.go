package hotspot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// errShortAnswer is a batched host answer with fewer entries than asked for.
var errShortAnswer = errors.New("host answered fewer entries than asked")

// inspectBatch bounds one InspectFiles call of recovery (the host allows 4096).
const inspectBatch = 4096

// recover rebuilds the state after a start: it puts back limits a crash left boosted, reads
// every hint record from StateDir, then every file those records name, by inode id, with its
// marker. The markers say which hints hold a file, its original factor and the factor this
// manager set (or, mid-change, the one before): a file whose factor is neither was changed by
// someone else and is let go; a change left half-done by a crash is finished. An undecodable
// record or marker is reported (List, metrics, log) and left in place, and holds back nothing
// else. Due hints are restored by the next tick.
func (m *Manager) recover(ctx context.Context) error {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	ns, err := m.host.GetNamesystemState(ctx)
	if err != nil {
		return fmt.Errorf("namesystem state: %w", err)
	}
	if !ns.Active || ns.SafeMode {
		return fmt.Errorf("%w: NameNode active=%v safe_mode=%v", ErrUnavailable, ns.Active, ns.SafeMode)
	}
	xattrs, err := m.host.GetXAttrs(ctx, m.cfg.StateDir, nnhost.AsService)
	if err != nil {
		return fmt.Errorf("read registry on %s: %w", m.cfg.StateDir, err)
	}
	var problems []string
	// The records are what recovery trusts (markers are checked against them): a state.dir
	// others may write is reported, as a problem and in the log, every start.
	if st, err := m.host.GetFileStatus(ctx, m.cfg.StateDir, nnhost.AsService); err == nil && st.Permission&0o022 != 0 {
		p := fmt.Sprintf("newtricks.hotspot.state.dir %s has mode %#o: users other than its owner may write the hint records recovery trusts; make it writable by the NameNode's user only",
			m.cfg.StateDir, st.Permission&0o7777)
		problems = append(problems, p)
	}
	if raw, ok := xattrs[m.cfg.limitsName()]; ok {
		var ls limitsState
		if err := json.Unmarshal(raw, &ls); err != nil {
			m.log.Warn("unreadable limits state; restoring NameNode defaults", "error", err)
		}
		m.boosted = map[string]string{}
		for _, k := range ls.Keys {
			m.boosted[k] = ls.Old[k]
		}
		if err := m.releaseBoost(ctx, ""); err != nil {
			return fmt.Errorf("restore replication limits: %w", err)
		}
	}

	known := map[string]bool{}   // every hint with a record
	decoded := map[string]bool{} // those whose record decodes
	var recs []*record
	var names []string
	for name := range xattrs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		id := m.cfg.hintIDFromName(name)
		if id == "" {
			continue
		}
		known[id] = true
		rec, err := decodeRecord(xattrs[name], m.cfg.MaxFiles)
		if err != nil {
			problems = append(problems, fmt.Sprintf("hint record %s on %s: %v; left in place, its files are not restored", name, m.cfg.StateDir, err))
			continue
		}
		rec.ID = id
		decoded[id] = true
		recs = append(recs, rec)
	}

	// Every file the records name, with its marker, and what the records say of it.
	var ids []int64
	byID := map[int64]*recorded{}
	for _, r := range recs {
		for _, f := range r.Files {
			rf := byID[f.ID]
			if rf == nil {
				rf = &recorded{targets: map[string]int{}}
				byID[f.ID] = rf
				ids = append(ids, f.ID)
			}
			if rf.original == 0 {
				rf.original = f.Original
			}
			rf.targets[r.ID] = f.Target
		}
	}
	insp := map[int64]*nnhost.FileInspection{}
	for start := 0; start < len(ids); start += inspectBatch {
		end := min(start+inspectBatch, len(ids))
		callStart := time.Now()
		batch, err := m.host.InspectFiles(ctx, nnhost.InspectRequest{FileIDs: ids[start:end], Xattr: m.cfg.markerName()})
		m.called("inspect_files", callStart)
		if err == nil && len(batch) != end-start {
			err = errShortAnswer
		}
		if err != nil {
			m.metrics.hostErrors.WithLabelValues("inspect_files").Inc()
			return fmt.Errorf("inspect hinted files: %w", err)
		}
		for i := range batch {
			insp[batch[i].FileID] = &batch[i]
		}
	}

	files := map[int64]*fileState{}
	result := map[int64]string{}
	var external []int64
	var fixes []fileChange // orphans to restore and half-done changes to finish
	for _, id := range ids {
		fi := insp[id]
		if fi == nil || !fi.Exists {
			result[id] = ResultGone
			continue
		}
		if !fi.HasXattr {
			continue // never raised, or already let go
		}
		mk, err := decodeMarker(fi.Xattr)
		if err == nil {
			for hid := range mk.H {
				if _, ok := byID[id].targets[hid]; known[hid] && !ok && !decoded[hid] {
					err = fmt.Errorf("held by hint %s, whose record does not decode", hid)
				}
			}
		}
		if err == nil {
			err = checkMarker(mk, *byID[id], known, m.cfg.ReplicationMax)
		}
		if err != nil {
			// The marker is on the file, writable by whoever may write it: one that does not
			// decode or disagrees with the records is not believed, and only this file waits.
			problems = append(problems, fmt.Sprintf("file %d (%s): %v; marker left in place, factor %d not changed",
				id, fi.Path, err, fi.Replication))
			m.log.Warn("file marker not believed; file skipped, recovery goes on", "file_id", id, "path", fi.Path, "error", err)
			m.metrics.markersRejected.Inc()
			m.metrics.recoverySkipped.WithLabelValues("marker").Inc()
			result[id] = ResultUnreadable
			continue
		}
		if rf := byID[id]; rf.original > 0 {
			mk.O = rf.original // the same (checked); taken from the record
		}
		cur := fi.Replication
		var applied int
		switch {
		case cur == mk.A:
			applied = mk.A
		case mk.P > 0 && cur == mk.P:
			applied = mk.P // the change in flight did not happen
		default:
			m.log.Info("factor changed by someone else while namenode-ext was away; left as is",
				"path", fi.Path, "now", cur, "we_set", mk.A)
			external = append(external, id)
			result[id] = ResultExternal
			m.metrics.restores.WithLabelValues(ResultExternal).Inc()
			continue
		}
		fs := &fileState{original: mk.O, applied: applied, hints: map[string]int{}}
		stale := false
		for hid := range mk.H {
			if known[hid] {
				fs.hints[hid] = byID[id].targets[hid] // the same (checked); taken from the record
			} else {
				stale = true // a hint whose record is gone: it was let go
			}
		}
		if len(fs.hints) == 0 {
			fixes = append(fixes, fileChange{id: id, original: mk.O, expect: applied, want: mk.O})
			result[id] = ResultRestored
			continue
		}
		files[id] = fs
		if want := fs.want(""); want != applied || stale || mk.P > 0 || mk.A != applied {
			fixes = append(fixes, fileChange{id: id, original: mk.O, expect: applied, want: want, hints: fs.hints})
		}
	}
	m.releaseExternal(ctx, external)
	for start := 0; start < len(fixes); start += batchSize {
		end := min(start+batchSize, len(fixes))
		results, callErr := m.writeChangesCall(ctx, nnhost.AsService, fixes[start:end])
		if callErr != nil {
			return fmt.Errorf("finish changes left by a restart: %w", callErr)
		}
		for i, r := range results {
			c := fixes[start+i]
			switch {
			case r.ok():
				if fs := files[c.id]; fs != nil {
					fs.applied = c.want
				}
			case r.code == codes.Aborted:
				delete(files, c.id)
				result[c.id] = ResultExternal
				m.releaseExternal(ctx, []int64{c.id})
			case r.code == codes.NotFound:
				delete(files, c.id)
				result[c.id] = ResultGone
			default:
				// One file the NameNode refuses (a factor it will not take, a lost permission)
				// is left as it is and reported; recovery goes on for every other file.
				delete(files, c.id)
				result[c.id] = ResultUnreadable
				problems = append(problems, fmt.Sprintf("file %d: finishing its change to factor %d refused: %s; left as is", c.id, c.want, r.msg))
				m.log.Warn("recovery: change refused; file skipped, recovery goes on", "file_id", c.id, "want", c.want, "error", r.msg)
				m.metrics.recoverySkipped.WithLabelValues("change_refused").Inc()
			}
		}
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	m.superuser = ns.Superuser
	m.live = ns.LiveDatanodes
	for _, rec := range recs {
		h := &hint{rec: *rec, state: StatePreparing}
		for _, rf := range rec.Files {
			hf := &hintFile{id: rf.ID, target: rf.Target}
			if fi := insp[rf.ID]; fi != nil && fi.Exists {
				hf.path, hf.length, hf.original = fi.Path, fi.Length, fi.Replication
			}
			if fs := files[rf.ID]; fs != nil {
				if t, ok := fs.hints[rec.ID]; ok {
					hf.held, hf.original, hf.target = true, fs.original, t
				}
			}
			if !hf.held {
				hf.ready = true
				hf.result = result[rf.ID]
				if hf.result == "" {
					hf.result = ResultNotHeld
				}
			}
			h.files = append(h.files, hf)
		}
		m.hints[rec.ID] = h
	}
	m.files = files
	m.reindexLocked()
	m.problems = problems
	for _, p := range problems {
		m.log.Error("hotspot state not usable", "problem", p)
	}
	m.metrics.problems.Set(float64(len(problems)))
	m.recovered = true
	m.log.Info("hotspot recovered", "hints", len(recs), "files", len(files), "problems", len(problems))
	return nil
}
