package mirror

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// recover opens the journal as dc-a's superuser and rebuilds every checkpoint it holds:
// verified files stay verified, the rest are found again by listing the source.
func (e *Engine) recover(ctx context.Context) error {
	ns, err := e.host.GetNamesystemState(ctx)
	if err != nil {
		return fmt.Errorf("namesystem state: %w", err)
	}
	if ns.SafeMode {
		return errors.New("NameNode in safe mode")
	}
	e.mu.Lock()
	e.superuser = ns.Superuser
	e.mu.Unlock()
	// The journal is the mirror's own: as dc-a's superuser under simple authentication; on a
	// Kerberized cluster as namenode-ext's principal (the journal directory must be its).
	jo := hdfs.ClientOptions{Addresses: []string{e.cfg.SourceNameNode}, User: ns.Superuser}
	if e.krb != nil {
		e.krb.options(&jo, e.cfg.Kerberos.SourceSPN)
	}
	cl, err := hdfs.NewClient(jo)
	if err != nil {
		return fmt.Errorf("journal client: %w", err)
	}
	e.journal.mu.Lock()
	if e.journal.client != nil {
		e.journal.client.Close()
	}
	e.journal.client = cl
	e.journal.mu.Unlock()
	metas, files, err := e.journal.load()
	if err != nil {
		return err
	}
	txid, err := e.journal.loadCursor()
	if err != nil {
		return fmt.Errorf("event cursor: %w", err)
	}
	// Forget finished checkpoints beyond keep-finished (the oldest first): the journal must not
	// grow with every checkpoint ever mirrored.
	var finished []metaRecord
	for _, m := range metas {
		if m.State.terminal() {
			finished = append(finished, m)
		}
	}
	if over := len(finished) - e.cfg.KeepFinished; over > 0 {
		drop := map[string]bool{}
		for _, m := range finished[:over] { // metas are sorted by FirstSeen
			drop[m.ID] = true
			e.journal.remove(m.ID)
		}
		kept := metas[:0]
		for _, m := range metas {
			if !drop[m.ID] {
				kept = append(kept, m)
			}
		}
		metas = kept
	}
	e.mu.Lock()
	var active, leftover []*checkpoint
	for _, m := range metas {
		r := e.rule(m.Rule)
		if r == nil {
			e.log.Warn("journal: checkpoint of a rule no longer configured", "id", m.ID, "rule", m.Rule)
			continue
		}
		k := Key{Rule: m.Rule, Job: m.Job, Step: m.Step}
		c := e.newCheckpoint(r, k, m.StepStr, m.SrcDir, m.ID)
		c.owner, c.group, c.resolved = m.Owner, m.Group, m.Owner != ""
		c.finalSrc, c.dest, c.staging = m.FinalSrc, m.Dest, m.Staging
		c.state, c.complete, c.urgent, c.err = m.State, m.Complete, m.Urgent, m.Err
		c.maxTxid, c.metaSaved, c.savedState = m.MaxTxid, true, m.State
		c.firstSeen = time.UnixMilli(m.FirstSeen)
		if m.CompletedAt > 0 {
			c.completedAt = time.UnixMilli(m.CompletedAt)
		}
		if m.CommittedAt > 0 {
			c.committedAt = time.UnixMilli(m.CommittedAt)
		}
		if prev := e.ckpts[k]; prev != nil && !prev.state.terminal() && !c.state.terminal() {
			e.log.Warn("journal: two active records for one checkpoint; keeping the older", "key", k)
			continue
		}
		e.ckpts[k] = c
		if c.state.terminal() {
			if len(files[m.ID]) > 0 {
				leftover = append(leftover, c) // the engine stopped before its housekeeping
			}
			c.filesDone, c.bytesDone, c.bytesTotal = m.Files, m.Bytes, m.Bytes
			for range m.Files {
				// Counts only: committed checkpoints keep no file list in memory.
			}
			e.finishLocked(c)
			continue
		}
		for _, rec := range files[m.ID] {
			f := &file{transfer: transfer{state: fileVerified}, rel: rec.Path, size: rec.Size, rec: rec}
			if c.files[rec.Path] == nil {
				c.order = append(c.order, f)
				c.filesDone++
				c.bytesDone += rec.Size
				c.bytesTotal += rec.Size
			}
			c.files[rec.Path] = f
		}
		c.dirsMade["."] = len(files[m.ID]) > 0
		e.byDir[c.srcDir] = c
		active = append(active, c)
	}
	e.recovered = true
	e.journalTxid, e.savedTxid, e.handledTxid = txid, txid, txid
	// With the event sink's cursor the stream resumes where the journal ends and nothing needs
	// listing, unless the hook cannot resume there (decided in periodic, once it says where it
	// resumed); without one, every active checkpoint is listed for what happened meanwhile.
	relist := e.cursor == nil || txid < 0
	if !relist {
		e.rescanWait, e.rescanBy = active, e.now().Add(rescanGrace)
	}
	e.mu.Unlock()
	if e.cursor != nil && txid >= 0 {
		e.cursor.Mark(txid)
	}
	if len(leftover) > 0 {
		go func() {
			t := time.NewTimer(e.cfg.CleanupDelay)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for _, c := range leftover {
				e.journal.dropSegments(c)
			}
		}()
	}
	for _, c := range active {
		if !c.resolved {
			go e.resolve(c)
		}
	}
	if relist {
		e.rescanAll(ctx, active, "no event cursor in the journal")
	}
	e.log.Info("mirror recovered", "checkpoints", len(metas), "active", len(active), "event_txid", txid)
	return nil
}

// rescanGrace is how long a recovered mirror waits for the event stream to say where it
// resumed before it lists its active checkpoints anyway.
const rescanGrace = 15 * time.Second

// rescanAll lists active checkpoints again for events the mirror may have missed.
func (e *Engine) rescanAll(ctx context.Context, cs []*checkpoint, why string) {
	if len(cs) == 0 {
		return
	}
	e.log.Info("listing active checkpoints again", "checkpoints", len(cs), "why", why)
	e.metrics.relists.Add(float64(len(cs)))
	for _, c := range cs {
		go e.rescan(ctx, c)
	}
}

// checkStream decides, once the event stream has resumed after a restart, whether the
// recovered checkpoints must be listed: only if the hook resumed after the journal's txid
// (its position was lost) or skipped purged edits. It also lists the active checkpoints
// again after events were dropped from a full queue.
func (e *Engine) checkStream(ctx context.Context) {
	e.mu.Lock()
	var cs []*checkpoint
	why := ""
	if len(e.rescanWait) > 0 && e.cursor != nil {
		resume, first, gaps := e.cursor.Stream()
		switch {
		case resume > 0 && (resume <= e.journalTxid+1 || resume < first) && gaps == 0:
			// Past the journal's txid only over events nobody selected: the hook resumed from
			// a position it had persisted.
			e.log.Info("event stream resumed where the journal ends; nothing to list", "resume_txid", resume,
				"first_txid", first, "journal_txid", e.journalTxid)
			e.rescanWait = nil
		case resume > 0:
			cs, why = e.rescanWait, fmt.Sprintf("event stream resumed at txid %d (first event %d) after the journal's %d (%d edit-log gaps)",
				resume, first, e.journalTxid, gaps)
		case e.now().After(e.rescanBy):
			cs, why = e.rescanWait, "the event stream did not say where it resumed"
		}
		if cs != nil {
			e.rescanWait = nil
		}
	}
	if d := e.queueDrops.Load(); d != e.dropsSeen {
		e.dropsSeen = d
		cs = cs[:0:0]
		for _, c := range e.ckpts {
			if !c.state.terminal() && !c.complete && c.resolved {
				cs = append(cs, c)
			}
		}
		why = "events were dropped from a full queue"
	}
	e.mu.Unlock()
	e.rescanAll(ctx, cs, why)
}

func (e *Engine) rule(name string) *Rule {
	for i := range e.cfg.Rules {
		if e.cfg.Rules[i].Name == name {
			return &e.cfg.Rules[i]
		}
	}
	return nil
}

// rescan brings a recovered checkpoint up to date with dc-a: files that closed while the
// mirror was down are queued, a temporary directory renamed meanwhile or a marker written
// meanwhile completes it, and a verified file that changed fails it.
func (e *Engine) rescan(ctx context.Context, c *checkpoint) {
	for attempt := 0; ; attempt++ {
		err := e.rescanOnce(ctx, c)
		if err == nil || ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrSourceChanged) {
			e.mu.Lock()
			e.failLocked(c, err)
			e.mu.Unlock()
			return
		}
		e.log.Warn("rescan after recovery", "checkpoint", c.key, "error", err)
		time.Sleep(min(time.Duration(attempt+1)*e.cfg.RetryInterval, 30*time.Second))
	}
}

func (e *Engine) rescanOnce(ctx context.Context, c *checkpoint) error {
	e.mu.Lock()
	dir, owner, r, complete := c.srcDir, c.owner, c.rule, c.complete
	e.mu.Unlock()
	if _, err := e.host.GetFileStatus(ctx, dir, nnhost.AsService); err != nil {
		final := expand(r.Source, c.key.Job, c.stepStr)
		if r.Completion == CompleteRename && final != dir {
			if _, ferr := e.host.GetFileStatus(ctx, final, nnhost.AsService); ferr == nil {
				e.mu.Lock()
				delete(e.byDir, c.srcDir)
				c.srcDir, c.finalSrc = final, final
				e.byDir[final] = c
				e.markCompleteLocked(c)
				e.mu.Unlock()
				dir, complete = final, true
			} else {
				return fmt.Errorf("%w: %s is gone", ErrSourceChanged, dir)
			}
		} else {
			return fmt.Errorf("%w: %s is gone", ErrSourceChanged, dir)
		}
	}
	if complete {
		return nil // the completion listing (periodic) checks every file
	}
	cl, err := e.src.get(owner)
	if err != nil {
		return err
	}
	infos := map[string]os.FileInfo{}
	err = cl.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && len(p) > len(dir) {
			infos[p[len(dir)+1:]] = info
		}
		return err
	})
	e.src.put(owner, cl, err == nil)
	if err != nil {
		return err
	}
	for rel, info := range infos {
		lb, err := e.host.GetBlockLocations(ctx, dir+"/"+rel, 1, nnhost.AsService)
		if err != nil || lb.UnderConstruction {
			continue // its CLOSE event will come
		}
		e.mu.Lock()
		if f := c.files[rel]; f != nil && f.state == fileVerified {
			if s := infoOf(info); s.size != f.rec.Size || s.mtime != f.rec.MtimeMs || (f.rec.FileID != 0 && s.id != f.rec.FileID) {
				e.mu.Unlock()
				return fmt.Errorf("%w: %s/%s changed after it was mirrored", ErrSourceChanged, dir, rel)
			}
		} else if rel != e.cfg.Manifest {
			e.addFileLocked(c, rel, info.Size())
			if r.Completion == CompleteMarker && rel == r.Marker {
				e.markCompleteLocked(c)
			}
		}
		e.mu.Unlock()
	}
	return nil
}
