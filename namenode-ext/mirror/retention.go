package mirror

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"
)

// cleanupLater runs a committed checkpoint's housekeeping, removing its journal segments on
// dc-a (the manifest and the meta record hold what they held) and retention of the job's
// older mirrors on dc-b, CleanupDelay after the commit: evaluators start reading the
// checkpoint the moment it commits, and the deletes (NameNode edits, block invalidation on
// the DataNodes) would compete with them. Housekeeping runs one checkpoint at a time; if the
// engine stops first it is skipped: segments left are dropped at the next recovery and
// retention catches up at the job's next commit.
func (e *Engine) cleanupLater(ctx context.Context, c *checkpoint) {
	run := func() {
		e.cleanupMu.Lock()
		defer e.cleanupMu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if e.cleanupHook != nil {
			e.cleanupHook(c)
			return
		}
		e.journal.dropSegments(c)
		e.retain(ctx, c)
	}
	delay := e.cfg.CleanupDelay // read once, here: cfg is not guarded by a lock
	if delay <= 0 {
		run()
		return
	}
	go func() {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			run()
		}
	}()
}

// retain deletes a job's committed checkpoints on dc-b beyond the rule's Retain newest;
// only checkpoints older than one just committed go.
func (e *Engine) retain(ctx context.Context, c *checkpoint) {
	for _, old := range e.retentionVictims(c) {
		if !e.retire(old) {
			return // dc-b unreachable as that owner: the job's next commit tries again
		}
	}
}

// retentionVictims picks, for the checkpoint c just committed, the same job's committed
// checkpoints of the same owner beyond the rule's Retain newest that are older than c. A job
// name is only a part of a path: in a shared directory (/ckpt/{job}-step_{step}) anyone can
// make a checkpoint named like another user's job, and it must not retire that user's
// mirrors.
func (e *Engine) retentionVictims(c *checkpoint) []*checkpoint {
	if c.rule.Retain <= 0 {
		return nil
	}
	e.mu.Lock()
	var same []*checkpoint
	for _, o := range e.ckpts {
		if o.key.Rule == c.key.Rule && o.key.Job == c.key.Job && o.state == StateCommitted && o.owner == c.owner && o.owner != "" {
			same = append(same, o)
		}
	}
	e.mu.Unlock()
	sort.Slice(same, func(a, b int) bool { return same[a].key.Step > same[b].key.Step })
	if len(same) <= c.rule.Retain {
		return nil
	}
	var victims []*checkpoint
	for _, old := range same[c.rule.Retain:] {
		if old.key.Step < c.key.Step {
			victims = append(victims, old)
		}
	}
	return victims
}

// retire deletes an old mirror on dc-b as its owner and records it retired, only if the
// destination still holds the manifest this mirror committed there for that owner (its id
// and owner): whatever else is at that path now is left alone. It reports false only when no
// dc-b client could be had (retention stops for now); a failed delete is logged and the
// checkpoint stays committed.
func (e *Engine) retire(old *checkpoint) bool {
	dc, err := e.dst.get(old.owner)
	if err != nil {
		e.log.Warn("retention", "checkpoint", old.key, "error", err)
		return false
	}
	m, merr := readManifestHead(dc, old.dest+"/"+e.cfg.Manifest)
	if merr != nil && isConnErr(merr) {
		e.dst.put(old.owner, dc, false)
		e.log.Warn("retention", "checkpoint", old.key, "error", merr)
		return false
	}
	if merr != nil || m.ID != old.id || m.Owner != old.owner {
		e.dst.put(old.owner, dc, true)
		why := "not the manifest this mirror committed"
		if merr != nil {
			why = merr.Error()
		} else {
			why += fmt.Sprintf(" (id %q owner %q)", m.ID, m.Owner)
		}
		e.metrics.retentionSkipped.Inc()
		e.log.Warn("retention: destination not deleted: it does not hold this checkpoint's manifest", "checkpoint", old.key,
			"dest", old.dest, "why", why)
		e.mu.Lock()
		old.state = StateRetired // no longer this mirror's to retire
		old.err = "retention left the destination in place: " + why
		e.changedLocked(old)
		e.mu.Unlock()
		e.journal.saveMeta(old)
		return true
	}
	err = dc.RemoveAll(old.dest)
	e.dst.put(old.owner, dc, err == nil)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		e.log.Warn("retention: deleting old mirror", "dest", old.dest, "error", err)
		return true
	}
	e.mu.Lock()
	old.state = StateRetired
	e.changedLocked(old)
	e.mu.Unlock()
	e.journal.saveMeta(old)
	e.log.Info("retention: old mirror deleted", "checkpoint", old.key, "dest", old.dest)
	return true
}
