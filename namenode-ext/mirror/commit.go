package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// Manifest is written into every committed checkpoint directory on dc-b (Config.Manifest).
type Manifest struct {
	V           int          `json:"v"`
	ID          string       `json:"id"`
	Rule        string       `json:"rule"`
	Job         string       `json:"job"`
	Step        int64        `json:"step"`
	Source      string       `json:"source"`
	Owner       string       `json:"owner"`
	CompletedAt int64        `json:"completed_ms"`
	Files       []fileRecord `json:"files"`
}

// preparedManifest is the manifest file created on dc-b (its block allocated, and its head,
// everything before the file records, sent to the DataNode, which opens the write pipeline)
// as soon as the complete checkpoint's files are all known, while its last files are still
// copied: the commit then only streams the records and closes it, and since the top
// directory's entry exists already, sets the top directory's times at the same time.
type preparedManifest struct {
	ready  chan struct{} // closed once w, dc (or err) are set
	dc     *hdfs.Client  // the client w belongs to, held until the commit
	w      *hdfs.FileWriter
	prefix []byte // written already
	err    error
}

// manifestHeadLocked is the checkpoint's manifest without its file records.
func (e *Engine) manifestHeadLocked(c *checkpoint) Manifest {
	return Manifest{V: 1, ID: c.id, Rule: c.key.Rule, Job: c.key.Job, Step: c.key.Step, Source: c.srcDir,
		Owner: c.owner, CompletedAt: c.completedAt.UnixMilli()}
}

// manifestPrefix is the start of the manifest's JSON up to its file records (Files is the last
// field): the same bytes however many records follow.
func manifestPrefix(m Manifest) []byte {
	m.Files = nil
	b, _ := json.MarshalIndent(m, "", " ")
	key := []byte(`"files": `)
	return b[:bytes.Index(b, key)+len(key)]
}

func (e *Engine) prepareManifest(c *checkpoint, pm *preparedManifest) {
	defer close(pm.ready)
	e.mu.Lock()
	owner, staging := c.owner, c.staging
	prefix := manifestPrefix(e.manifestHeadLocked(c))
	e.mu.Unlock()
	dc, err := e.dst.get(owner)
	if err != nil {
		pm.err = err
		return
	}
	if err := e.ensureDir(c, dc, "."); err != nil {
		pm.err = err
		e.dst.put(owner, dc, !isConnErr(err))
		return
	}
	w, err := e.createManifest(dc, staging+"/"+e.cfg.Manifest)
	if err == nil {
		// Allocates the block (addBlock), connects to the DataNode and sends the head now;
		// colinmarc/hdfs keeps the pipeline alive with heartbeats until the commit.
		if _, err = w.Write(prefix); err == nil {
			err = w.Flush()
		}
		if err != nil {
			w.Close()
		}
	}
	if err != nil {
		pm.err = err
		e.dst.put(owner, dc, !isConnErr(err))
		return
	}
	pm.dc, pm.w, pm.prefix = dc, w, prefix
}

// takeManifest returns the prepared manifest of this attempt, if it is usable.
func (e *Engine) takeManifest(c *checkpoint) *preparedManifest {
	e.mu.Lock()
	pm := c.manifest
	c.manifest = nil
	e.mu.Unlock()
	if pm == nil {
		return nil
	}
	<-pm.ready
	if pm.err != nil {
		e.log.Debug("manifest not prepared", "checkpoint", c.key, "error", pm.err)
		return nil
	}
	return pm
}

// commit writes the manifest into the staging directory, sets the directories' attributes
// and renames the checkpoint into place on dc-b, as its owner.
func (e *Engine) commit(ctx context.Context, c *checkpoint) {
	err := e.commitOnce(ctx, c)
	e.mu.Lock()
	c.commitOn = false
	if err != nil {
		if errors.Is(err, ErrDestConflict) || errors.Is(err, ErrSourceChanged) {
			e.failLocked(c, err)
		} else {
			back := e.cfg.RetryInterval
			if !errors.Is(err, errRequeued) {
				c.lastErr = retryNote(err)
				c.retries++
				c.commitFails++
				e.retriesAll.Add(1)
				e.metrics.retries.Inc()
				if destFull(err) {
					e.metrics.destFull.Inc()
				}
				back = min(e.cfg.RetryInterval<<min(c.commitFails-1, 5), 30*time.Second)
				e.log.Warn("commit retried", "checkpoint", c.key, "error", err, "in", back)
			}
			c.commitOn = true // hold off the next attempt
			go func() {
				time.Sleep(back)
				e.mu.Lock()
				c.commitOn = false
				e.mu.Unlock()
			}()
		}
		e.mu.Unlock()
		return
	}
	c.state = StateCommitted
	c.committedAt = e.now()
	c.lastErr = ""
	delete(e.byDir, c.srcDir)
	e.commitOrder = append(e.commitOrder, c.key)
	e.recountUrgentLocked()
	e.changedLocked(c)
	e.finishLocked(c)
	lag := c.committedAt.Sub(c.completedAt)
	since := func(t time.Time) time.Duration {
		if t.IsZero() || t.Before(c.completedAt) {
			return 0
		}
		return t.Sub(c.completedAt)
	}
	listed, copied, verified, nfiles := since(c.listedAt), since(c.copiedAt), since(c.verifiedAt), len(c.files)
	e.mu.Unlock()
	e.metrics.committed.Inc()
	e.metrics.lag.Observe(lag.Seconds())
	e.log.Info("checkpoint committed", "checkpoint", c.key, "dest", c.dest, "files", nfiles, "lag", lag,
		"listed_after", listed, "copied_after", copied, "verified_after", verified)
	e.journal.saveMeta(c)
	e.cleanupLater(ctx, c)
}

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
	if e.cfg.CleanupDelay <= 0 {
		run()
		return
	}
	go func() {
		t := time.NewTimer(e.cfg.CleanupDelay)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			run()
		}
	}()
}

func (e *Engine) commitOnce(ctx context.Context, c *checkpoint) error {
	e.mu.Lock()
	owner, dir, staging, dest, attempt := c.owner, c.srcDir, c.staging, c.dest, c.commitAttempts
	c.commitAttempts++
	m := e.manifestHeadLocked(c)
	dirs := append([]string(nil), c.dirsList...)
	listed := c.dirInfos
	var empty []string // directories that hold no file were never created on dc-b
	for _, rel := range dirs {
		if !c.dirsMade[rel] {
			empty = append(empty, rel)
		}
	}
	e.mu.Unlock()
	began := time.Now()
	var stepsMu sync.Mutex
	var steps []any // when each step ended (since began), for the "commit steps" log
	step := func(name string) {
		stepsMu.Lock()
		steps = append(steps, name, time.Since(began).Round(time.Millisecond).String())
		stepsMu.Unlock()
	}

	sc, err := e.src.get(owner)
	if err != nil {
		return err
	}
	defer e.src.put(owner, sc, true)
	manifest := func() []byte {
		e.mu.Lock()
		m.Files = m.Files[:0]
		for _, f := range c.order {
			m.Files = append(m.Files, f.rec)
		}
		e.mu.Unlock()
		sort.Slice(m.Files, func(a, b int) bool { return m.Files[a].Path < m.Files[b].Path })
		b, _ := json.MarshalIndent(m, "", " ")
		return b
	}

	// Everything that can overlap does, since every step across the WAN is a round trip:
	//  - on dc-a (local): a fresh look at every file and directory; content changed since its
	//    copy sends the file back to the queue, a permission or group change is applied;
	//  - on dc-b: the conflict check; the manifest as the records are now (written again in
	//    the rare case the fresh look changes a record); empty directories, then, once the
	//    fresh look is in, fix-ups and the attributes of every subdirectory (none of which
	//    adds a directory entry: only the manifest does, in the top directory, whose times
	//    are set last).
	var (
		fixups   []fixup
		dirInfos map[string]os.FileInfo
		top      os.FileInfo
		errCheck error
		looked   = make(chan struct{})
	)
	go func() {
		defer close(looked)
		defer step("look")
		if fixups, dirInfos, errCheck = e.recheck(c, owner, dir); errCheck != nil {
			return
		}
		var err error
		if top, err = sc.Stat(dir); err != nil {
			errCheck = fmt.Errorf("%w: %s: %v", ErrSourceChanged, dir, err)
			return
		}
		e.mu.Lock()
		for _, fx := range fixups {
			if f := c.files[fx.rel]; f != nil {
				f.rec.Perm, f.rec.Group = uint32(fx.perm.Perm()), fx.group
			}
		}
		e.mu.Unlock()
	}()
	var wg sync.WaitGroup
	var errDest, errManifest, errAttrs error
	committedBefore := false
	wg.Add(3)
	go func() {
		defer wg.Done()
		defer step("dest_check")
		errDest = e.withDst(owner, func(dc *hdfs.Client) error {
			if _, serr := dc.Stat(dest); serr == nil {
				old, err := readManifest(dc, dest+"/"+e.cfg.Manifest)
				if err == nil && old.ID == c.id {
					committedBefore = true // by a run that crashed before journaling it
					return nil
				}
				if err == nil {
					return fmt.Errorf("%w: %s holds checkpoint %s", ErrDestConflict, dest, old.ID)
				}
				return fmt.Errorf("%w: %s exists", ErrDestConflict, dest)
			} else if !errors.Is(serr, os.ErrNotExist) {
				return fmt.Errorf("stat %s on dc-b: %w", dest, serr)
			}
			return nil
		})
	}()
	pm := e.takeManifest(c)
	topDone, newEntry := false, false
	var written []byte // the manifest as written
	go func() {
		defer wg.Done()
		defer step("manifest")
		b := manifest()
		if pm != nil {
			if bytes.HasPrefix(b, pm.prefix) {
				_, errManifest = pm.w.Write(b[len(pm.prefix):])
				if errManifest == nil {
					errManifest = closeWriter(pm.w)
				}
				e.dst.put(owner, pm.dc, errManifest == nil)
				if errManifest != nil {
					errManifest = fmt.Errorf("write manifest on dc-b: %w", errManifest)
				} else {
					written = b
				}
				return
			}
			// The head changed since it was sent (the directory renamed): write it anew.
			pm.w.Close()
			e.dst.put(owner, pm.dc, true)
			newEntry = true
		}
		errManifest = e.withDst(owner, func(dc *hdfs.Client) error {
			if err := e.ensureDir(c, dc, "."); err != nil {
				return err
			}
			return e.writeManifest(dc, staging+"/"+e.cfg.Manifest, b, attempt > 0 || newEntry)
		})
		if errManifest == nil {
			written = b
		}
	}()
	if pm != nil {
		// The manifest's entry exists already: the top directory's attributes go now.
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-looked
			if errCheck == nil {
				topDone = e.topAttrs(ctx, owner, staging, top) == nil
				step("top_attrs")
			}
		}()
	}
	go func() {
		defer wg.Done()
		defer step("dir_attrs")
		var jobs []func(*hdfs.Client) error
		for _, rel := range empty {
			p := staging + "/" + rel
			jobs = append(jobs, func(dc *hdfs.Client) error { return dc.MkdirAll(p, 0o755) })
		}
		if errAttrs = e.parallel(owner, jobs); errAttrs != nil {
			return
		}
		// Subdirectories get the attributes the completion listing saw at once; the fresh look
		// only redoes those that changed since (rare).
		jobs = nil
		for _, rel := range dirs {
			if fi := listed[rel]; fi != nil {
				p := staging + "/" + rel
				jobs = append(jobs, func(dc *hdfs.Client) error { return e.setAttrs(ctx, dc, owner, p, fi) })
			}
		}
		if errAttrs = e.parallel(owner, jobs); errAttrs != nil {
			return
		}
		<-looked
		if errCheck != nil {
			return
		}
		jobs = nil
		for _, fx := range fixups {
			p := staging + "/" + fx.rel
			jobs = append(jobs, func(dc *hdfs.Client) error {
				if err := dc.Chmod(p, fx.perm); err != nil {
					return fmt.Errorf("chmod %s on dc-b: %w", p, err)
				}
				if fx.group != "" {
					if err := dc.Chown(p, owner, fx.group); err != nil {
						e.log.Warn("group not preserved", "file", p, "group", fx.group, "error", err)
					}
				}
				return nil
			})
		}
		for _, rel := range dirs {
			fi := dirInfos[rel]
			if fi == nil {
				errAttrs = fmt.Errorf("%w: directory %s/%s vanished", ErrSourceChanged, dir, rel)
				return
			}
			if was := listed[rel]; was != nil && was.ModTime().Equal(fi.ModTime()) && was.Mode() == fi.Mode() {
				continue
			}
			p := staging + "/" + rel
			jobs = append(jobs, func(dc *hdfs.Client) error { return e.setAttrs(ctx, dc, owner, p, fi) })
		}
		errAttrs = e.parallel(owner, jobs)
	}()
	wg.Wait()
	<-looked
	if errDest != nil {
		return errDest
	}
	if committedBefore {
		return nil
	}
	for _, err := range []error{errCheck, errManifest, errAttrs} {
		if err != nil {
			return err
		}
	}
	if err := e.waitJournaled(ctx, c); err != nil {
		return err
	}
	step("journaled")
	if final := manifest(); !bytes.Equal(final, written) {
		// The manifest was written before the fresh look changed some records (or a file
		// was copied again meanwhile): write it again.
		if err := e.withDst(owner, func(dc *hdfs.Client) error {
			return e.writeManifest(dc, staging+"/"+e.cfg.Manifest, final, true)
		}); err != nil {
			return err
		}
		newEntry = true
	}
	// The top directory: permission and times (again after a new entry), then the rename.
	if !topDone || newEntry {
		if err := e.topAttrs(ctx, owner, staging, top); err != nil {
			return err
		}
	}
	err = e.withDst(owner, func(dc *hdfs.Client) error {
		err := e.times.rename(ctx, dc, owner, staging, dest)
		if errors.Is(err, os.ErrNotExist) {
			// The destination's parent does not exist yet.
			if err := dc.MkdirAll(path.Dir(dest), 0o755); err != nil {
				return fmt.Errorf("create %s on dc-b as %s: %w", path.Dir(dest), owner, err)
			}
			err = e.times.rename(ctx, dc, owner, staging, dest)
		}
		if errors.Is(err, os.ErrExist) {
			err = fmt.Errorf("%w: %s appeared during the commit: %v", ErrDestConflict, dest, err)
		}
		if err != nil {
			return fmt.Errorf("rename %s to %s on dc-b: %w", staging, dest, err)
		}
		return nil
	})
	if err == nil {
		stepsMu.Lock()
		e.log.Info("commit steps", append([]any{"checkpoint", c.key, "took", time.Since(began)}, steps...)...)
		stepsMu.Unlock()
	}
	return err
}

// waitJournaled waits until every file of the checkpoint is copied and in the journal: the
// commit started while dc-b completed the last ones and the journal recorded them, and a
// committed checkpoint's files must all be there. A file sent back to the queue (its close on
// dc-b failed, or it changed) ends this attempt.
func (e *Engine) waitJournaled(ctx context.Context, c *checkpoint) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		e.mu.Lock()
		done, copied, ch := c.filesDone == len(c.files), c.copiedAllLocked() || c.recordsKnownLocked(), c.changed
		e.mu.Unlock()
		switch {
		case done:
			return nil
		case !copied:
			return errRequeued
		case time.Now().After(deadline):
			return errors.New("the journal has not recorded the last files for 30 s")
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// topAttrs gives the staging directory the permission and times of the checkpoint directory
// (after its last entry was created).
func (e *Engine) topAttrs(ctx context.Context, owner, staging string, top os.FileInfo) error {
	if err := e.parallel(owner, []func(*hdfs.Client) error{
		func(dc *hdfs.Client) error { return e.times.set(ctx, dc, owner, staging, top.ModTime()) },
		func(dc *hdfs.Client) error { return dc.Chmod(staging, top.Mode().Perm()|top.Mode()&os.ModeSticky) },
	}); err != nil {
		return fmt.Errorf("attributes of %s on dc-b: %w", staging, err)
	}
	return nil
}

// withDst runs fn with a pooled dc-b client of owner.
func (e *Engine) withDst(owner string, fn func(*hdfs.Client) error) error {
	dc, err := e.dst.get(owner)
	if err != nil {
		return err
	}
	err = fn(dc)
	e.dst.put(owner, dc, !isConnErr(err))
	return err
}

// writeManifest writes the manifest into the staging directory (replacing one from an earlier
// attempt).
func (e *Engine) writeManifest(dc *hdfs.Client, mp string, b []byte, again bool) error {
	if again {
		if err := dc.Remove(mp); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove old manifest on dc-b: %w", err)
		}
	}
	w, err := e.createManifest(dc, mp)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return fmt.Errorf("write manifest on dc-b: %w", err)
	}
	if err := closeWriter(w); err != nil {
		return fmt.Errorf("close manifest on dc-b: %w", err)
	}
	return nil
}

// createManifest creates the manifest file (replacing one left by an earlier attempt).
func (e *Engine) createManifest(dc *hdfs.Client, mp string) (*hdfs.FileWriter, error) {
	def, err := e.destDefaults(dc)
	if err != nil {
		return nil, fmt.Errorf("server defaults of dc-b: %w", err)
	}
	w, err := dc.CreateFile(mp, def.Replication, def.BlockSize, 0o444)
	if errors.Is(err, os.ErrExist) {
		if rerr := dc.Remove(mp); rerr == nil {
			w, err = dc.CreateFile(mp, def.Replication, def.BlockSize, 0o444)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create manifest on dc-b: %w", err)
	}
	return w, nil
}

// errRequeued: a file changed after its copy and is being copied again; the commit waits.
var errRequeued = errors.New("files changed after their copy are being copied again")

func (e *Engine) recheck(c *checkpoint, owner, dir string) ([]fixup, map[string]os.FileInfo, error) {
	infos, dirs, err := e.walkTree(owner, dir, e.cfg.MaxFiles)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("%w: %s: %v", ErrSourceChanged, dir, err)
		}
		return nil, nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var fixups []fixup
	requeued := 0
	for rel, f := range c.files {
		fi, ok := infos[rel]
		if !ok {
			return nil, nil, fmt.Errorf("%w: %s/%s vanished", ErrSourceChanged, dir, rel)
		}
		s := infoOf(fi)
		if s.id != f.rec.FileID || s.size != f.rec.Size || s.mtime != f.rec.MtimeMs {
			if f.state == fileCopying {
				// Still completing on dc-b: the next attempt looks again once it is done.
				requeued++
				continue
			}
			e.log.Info("file changed after its copy; copying again", "checkpoint", c.key, "file", rel)
			if f.state == fileVerified {
				c.filesDone--
				c.bytesDone -= f.size
			}
			c.bytesTotal += s.size - f.size
			f.state, f.attempts, f.size = fileQueued, 0, s.size
			requeued++
			continue
		}
		if uint32(s.perm.Perm()) != f.rec.Perm || s.group != f.rec.Group {
			fixups = append(fixups, fixup{rel: rel, perm: s.perm, group: s.group})
		}
	}
	for rel := range infos {
		if c.files[rel] == nil && rel != e.cfg.Manifest {
			// Its CLOSE event (which queues it) has not arrived yet: wait for it.
			return nil, nil, fmt.Errorf("%s/%s appeared after the checkpoint completed; waiting for it", dir, rel)
		}
	}
	if requeued > 0 {
		e.cond.Broadcast()
		return nil, nil, errRequeued
	}
	return fixups, dirs, nil
}

// parallel runs jobs on up to 32 dc-b clients of owner at once and returns the first error.
func (e *Engine) parallel(owner string, jobs []func(*hdfs.Client) error) error {
	if len(jobs) == 0 {
		return nil
	}
	next := make(chan func(*hdfs.Client) error)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	for i := 0; i < min(64, len(jobs)); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dc, err := e.dst.get(owner)
			if err != nil {
				select {
				case errc <- err:
				default:
				}
				for range next {
				}
				return
			}
			healthy := true
			for job := range next {
				if err := job(dc); err != nil {
					healthy = !isConnErr(err)
					select {
					case errc <- err:
					default:
					}
				}
			}
			e.dst.put(owner, dc, healthy)
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// destDefaults returns dc-b's server defaults, asked once.
func (e *Engine) destDefaults(dc *hdfs.Client) (hdfs.ServerDefaults, error) {
	e.mu.Lock()
	d, ok := e.defaults, e.haveDefaults
	e.mu.Unlock()
	if ok {
		return d, nil
	}
	d, err := dc.ServerDefaults()
	if err != nil {
		return d, err
	}
	e.mu.Lock()
	e.defaults, e.haveDefaults = d, true
	e.mu.Unlock()
	return d, nil
}

// setAttrs gives a dc-b directory the permission and times of its dc-a original.
func (e *Engine) setAttrs(ctx context.Context, dc *hdfs.Client, owner, p string, fi os.FileInfo) error {
	perm := fi.Mode().Perm() | fi.Mode()&os.ModeSticky
	times := make(chan error, 1)
	if e.times.base != "" {
		// WebHDFS, not dc: at the same time as the chmod (neither changes the other's attribute).
		go func() { times <- e.times.set(ctx, dc, owner, p, fi.ModTime()) }()
	} else {
		times <- e.times.set(ctx, dc, owner, p, fi.ModTime())
	}
	cerr := dc.Chmod(p, perm)
	if err := <-times; err != nil {
		return fmt.Errorf("set times of %s on dc-b: %w", p, err)
	}
	if cerr != nil {
		return fmt.Errorf("chmod %s on dc-b: %w", p, cerr)
	}
	return nil
}

func readManifest(dc *hdfs.Client, p string) (*Manifest, error) {
	r, err := dc.Open(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, 512<<20))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", p, err)
	}
	return &m, nil
}

// retain deletes a job's committed checkpoints on dc-b beyond the rule's Retain newest;
// only checkpoints older than one just committed go.
func (e *Engine) retain(ctx context.Context, c *checkpoint) {
	if c.rule.Retain <= 0 {
		return
	}
	e.mu.Lock()
	var same []*checkpoint
	for _, o := range e.ckpts {
		if o.key.Rule == c.key.Rule && o.key.Job == c.key.Job && o.state == StateCommitted {
			same = append(same, o)
		}
	}
	e.mu.Unlock()
	sort.Slice(same, func(a, b int) bool { return same[a].key.Step > same[b].key.Step })
	if len(same) <= c.rule.Retain {
		return
	}
	for _, old := range same[c.rule.Retain:] {
		if old.key.Step >= c.key.Step {
			continue
		}
		dc, err := e.dst.get(old.owner)
		if err != nil {
			e.log.Warn("retention", "checkpoint", old.key, "error", err)
			return
		}
		err = dc.RemoveAll(old.dest)
		e.dst.put(old.owner, dc, err == nil)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			e.log.Warn("retention: deleting old mirror", "dest", old.dest, "error", err)
			continue
		}
		e.mu.Lock()
		old.state = StateRetired
		e.changedLocked(old)
		e.mu.Unlock()
		e.journal.saveMeta(old)
		e.log.Info("retention: old mirror deleted", "checkpoint", old.key, "dest", old.dest)
	}
}

// cleanupStaging removes a failed checkpoint's staging directory on dc-b.
func (e *Engine) cleanupStaging(c *checkpoint) {
	if pm := e.takeManifest(c); pm != nil {
		pm.dc.Close() // its open manifest goes with the directory
	}
	e.mu.Lock()
	owner, staging := c.owner, c.staging
	e.mu.Unlock()
	if owner == "" {
		return
	}
	dc, err := e.dst.get(owner)
	if err != nil {
		return
	}
	err = dc.RemoveAll(staging)
	e.dst.put(owner, dc, err == nil || errors.Is(err, os.ErrNotExist))
}
