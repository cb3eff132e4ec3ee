package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// commit writes the manifest into the staging directory, sets the directories' attributes
// and renames the checkpoint into place on dc-b, as its owner; then publishes the outcome.
func (e *Engine) commit(ctx context.Context, c *checkpoint) {
	if err := e.commitOnce(ctx, c); err != nil {
		e.commitFailed(c, err)
		return
	}
	e.published(ctx, c)
}

// commitFailed records a failed commit attempt: a conflict on dc-b or a source change fails
// the checkpoint; anything else is retried after a backoff (at once for files being copied
// again, which the next attempt waits for).
func (e *Engine) commitFailed(c *checkpoint, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c.commitOn = false
	if errors.Is(err, ErrDestConflict) || errors.Is(err, ErrSourceChanged) {
		e.failLocked(c, err)
		return
	}
	back := e.cfg.RetryInterval
	if !errors.Is(err, errRequeued) {
		c.commitFails++
		back = min(e.retryLocked(c, err, c.commitFails), 30*time.Second)
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

// published records a committed checkpoint (state, metrics, the journal's meta record) and
// schedules its housekeeping.
func (e *Engine) published(ctx context.Context, c *checkpoint) {
	e.mu.Lock()
	c.commitOn = false
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

// commitOnce is one commit attempt, in named steps. Every step across the WAN is a round trip,
// so the first ones overlap (stageAndVerify): a fresh look at the source on dc-a, the conflict
// check on dc-b, and staging there (the manifest as the records are now, the directories'
// attributes). Then, in order: every file copied and journaled (the commit started while dc-b
// completed the last ones), the manifest sealed (written again if the fresh look or a copy
// changed a record, and the top directory's attributes set after its last entry), and the
// rename into place, which is the commit. A destination that already holds this checkpoint
// (committed by a run that crashed before journaling it) ends the attempt as a success.
func (e *Engine) commitOnce(ctx context.Context, c *checkpoint) error {
	r := e.beginCommit(c)
	sc, err := e.src.get(r.owner)
	if err != nil {
		return err
	}
	defer e.src.put(r.owner, sc, true)
	r.sc = sc
	st, err := r.stageAndVerify(ctx)
	if err != nil || st.committedBefore {
		return err
	}
	if err := e.waitJournaled(ctx, c); err != nil {
		return err
	}
	r.mark("journaled")
	if err := r.seal(ctx, st); err != nil {
		return err
	}
	if err := r.renameIntoPlace(ctx); err != nil {
		return err
	}
	r.logSteps()
	return nil
}

// commitRun is one commit attempt: what it took from the checkpoint when it began, and when
// each step ended (for the "commit steps" log).
type commitRun struct {
	e  *Engine
	c  *checkpoint
	sc *hdfs.Client // dc-a, as the owner

	owner, dir, staging, dest string
	attempt                   int
	head                      Manifest               // the manifest without its records
	dirs                      []string               // subdirectories (the completion listing)
	listed                    map[string]os.FileInfo // their attributes in that listing
	empty                     []string               // subdirectories with no file: not on dc-b yet

	began   time.Time
	stepsMu sync.Mutex
	steps   []any // step name, time since began
}

// beginCommit snapshots what the attempt works from and counts the attempt.
func (e *Engine) beginCommit(c *checkpoint) *commitRun {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := &commitRun{e: e, c: c, owner: c.owner, dir: c.srcDir, staging: c.staging, dest: c.dest,
		attempt: c.commitAttempts, head: e.manifestHeadLocked(c), dirs: append([]string(nil), c.dirsList...),
		listed: c.dirInfos, began: time.Now()}
	c.commitAttempts++
	for _, rel := range r.dirs {
		if !c.dirsMade[rel] {
			r.empty = append(r.empty, rel)
		}
	}
	return r
}

// mark records that a step ended.
func (r *commitRun) mark(step string) {
	r.stepsMu.Lock()
	r.steps = append(r.steps, step, time.Since(r.began).Round(time.Millisecond).String())
	r.stepsMu.Unlock()
}

func (r *commitRun) logSteps() {
	r.stepsMu.Lock()
	defer r.stepsMu.Unlock()
	r.e.log.Info("commit steps", append([]any{"checkpoint", r.c.key, "took", time.Since(r.began)}, r.steps...)...)
}

// manifest is the checkpoint's manifest with its records as they are now, sorted by path.
func (r *commitRun) manifest() []byte {
	m := r.head
	r.e.mu.Lock()
	for _, f := range r.c.order {
		m.Files = append(m.Files, f.rec)
	}
	r.e.mu.Unlock()
	sort.Slice(m.Files, func(a, b int) bool { return m.Files[a].Path < m.Files[b].Path })
	b, _ := json.MarshalIndent(m, "", " ")
	return b
}

// async is a step running on its own goroutine; wait returns its result once it has ended
// (any number of times, from any goroutine).
type async[T any] struct {
	done chan struct{}
	v    T
	err  error
}

func startAsync[T any](fn func() (T, error)) *async[T] {
	a := &async[T]{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.v, a.err = fn()
	}()
	return a
}

func (a *async[T]) wait() (T, error) {
	<-a.done
	return a.v, a.err
}

// step starts fn as the step name, marked when it ends (whatever its outcome).
func step[T any](r *commitRun, name string, fn func() (T, error)) *async[T] {
	return startAsync(func() (T, error) {
		defer r.mark(name)
		return fn()
	})
}

// sourceLook is the fresh look at the checkpoint on dc-a.
type sourceLook struct {
	fixups   []fixup                // files whose permission or group changed since their copy
	dirInfos map[string]os.FileInfo // the subdirectories now
	top      os.FileInfo            // the checkpoint directory
}

// staged is what stageAndVerify leaves for the steps after it.
type staged struct {
	committedBefore bool       // dc-b holds this checkpoint already: nothing left to do
	look            sourceLook // the fresh look
	written         []byte     // the manifest as written into staging
	newEntry        bool       // the manifest's directory entry is newer than the top's times
	topDone         bool       // the top directory's attributes are set after that entry
}

// stageAndVerify runs the overlapping steps and waits for all of them: none outlives the
// attempt. Their errors count in this order: the destination check (a conflict fails the
// checkpoint; this checkpoint committed already ends the attempt), the fresh look, the
// manifest, the directories.
func (r *commitRun) stageAndVerify(ctx context.Context) (staged, error) {
	look := step(r, "look", r.verifySource)
	dest := step(r, "dest_check", r.checkDest)
	// The prepared manifest (its head sent while the last files were copied) is waited for
	// with the two checks already running.
	pm := r.e.takeManifest(r.c)
	manifest := step(r, "manifest", func() (staged, error) { return r.stageManifest(pm) })
	var top *async[bool]
	if pm != nil {
		// The manifest's entry exists already: the top directory's attributes go now.
		top = startAsync(func() (bool, error) { return r.stageTop(ctx, look), nil })
	}
	dirs := step(r, "dir_attrs", func() (struct{}, error) { return struct{}{}, r.stageDirs(ctx, look) })

	lk, errLook := look.wait()
	committedBefore, errDest := dest.wait()
	st, errManifest := manifest.wait()
	_, errDirs := dirs.wait()
	if top != nil {
		st.topDone, _ = top.wait()
	}
	st.look, st.committedBefore = lk, committedBefore
	if errDest != nil {
		return st, errDest
	}
	if committedBefore {
		return st, nil
	}
	for _, err := range []error{errLook, errManifest, errDirs} {
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// verifySource takes a fresh look at every file and directory on dc-a (local): content
// changed since its copy sends the file back to the queue (the attempt ends), a permission or
// group change is applied to the file's record.
func (r *commitRun) verifySource() (sourceLook, error) {
	fixups, dirInfos, err := r.e.recheck(r.c, r.owner, r.dir)
	if err != nil {
		return sourceLook{}, err
	}
	top, err := r.sc.Stat(r.dir)
	if err != nil {
		return sourceLook{}, fmt.Errorf("%w: %s: %v", ErrSourceChanged, r.dir, err)
	}
	r.e.mu.Lock()
	for _, fx := range fixups {
		if f := r.c.files[fx.rel]; f != nil {
			f.rec.Perm, f.rec.Group = uint32(fx.perm.Perm()), fx.group
		}
	}
	r.e.mu.Unlock()
	return sourceLook{fixups: fixups, dirInfos: dirInfos, top: top}, nil
}

// checkDest looks at the destination on dc-b: free (nil), this checkpoint committed by a run
// that crashed before journaling it (true), or anything else (ErrDestConflict).
func (r *commitRun) checkDest() (committedBefore bool, err error) {
	err = r.e.withDst(r.owner, func(dc *hdfs.Client) error {
		if _, serr := dc.Stat(r.dest); serr == nil {
			old, err := readManifestHead(dc, r.dest+"/"+r.e.cfg.Manifest)
			if err == nil && old.ID == r.c.id {
				committedBefore = true
				return nil
			}
			if err == nil {
				return fmt.Errorf("%w: %s holds checkpoint %s", ErrDestConflict, r.dest, old.ID)
			}
			return fmt.Errorf("%w: %s exists", ErrDestConflict, r.dest)
		} else if !errors.Is(serr, os.ErrNotExist) {
			return fmt.Errorf("stat %s on dc-b: %w", r.dest, serr)
		}
		return nil
	})
	return committedBefore, err
}

// stageManifest writes the manifest with the records as they are now into the staging
// directory: through the prepared writer when its head still matches (one round trip), else
// anew. It returns what was written and whether the manifest's directory entry is new.
func (r *commitRun) stageManifest(pm *preparedManifest) (staged, error) {
	var st staged
	b := r.manifest()
	if pm != nil {
		if bytes.HasPrefix(b, pm.prefix) {
			_, err := pm.w.Write(b[len(pm.prefix):])
			if err == nil {
				err = closeWriter(pm.w)
			}
			r.e.dst.put(r.owner, pm.dc, err == nil)
			if err != nil {
				return st, fmt.Errorf("write manifest on dc-b: %w", err)
			}
			st.written = b
			return st, nil
		}
		// The head changed since it was sent (the directory renamed): write it anew.
		pm.w.Close()
		r.e.dst.put(r.owner, pm.dc, true)
		st.newEntry = true
	}
	err := r.e.withDst(r.owner, func(dc *hdfs.Client) error {
		if err := r.e.ensureDir(r.c, dc, "."); err != nil {
			return err
		}
		return r.e.writeManifest(dc, r.staging+"/"+r.e.cfg.Manifest, b, r.attempt > 0 || st.newEntry)
	})
	if err == nil {
		st.written = b
	}
	return st, err
}

// stageTop sets the top directory's attributes once the fresh look has its original, when the
// manifest's entry exists already (a prepared manifest). It reports whether that worked; if
// not, seal sets them.
func (r *commitRun) stageTop(ctx context.Context, look *async[sourceLook]) bool {
	lk, err := look.wait()
	if err != nil {
		return false
	}
	done := r.e.topAttrs(ctx, r.owner, r.staging, lk.top) == nil
	r.mark("top_attrs")
	return done
}

// stageDirs creates the empty subdirectories and gives every subdirectory the attributes the
// completion listing saw; once the fresh look is in, it applies the files' permission and
// group fix-ups and redoes the directories that changed since (rare). None of this adds a
// directory entry: only the manifest does, in the top directory. A failed look ends it
// without an error of its own (stageAndVerify reports the look's).
func (r *commitRun) stageDirs(ctx context.Context, look *async[sourceLook]) error {
	owner, staging := r.owner, r.staging
	var jobs []func(*hdfs.Client) error
	for _, rel := range r.empty {
		p := staging + "/" + rel
		jobs = append(jobs, func(dc *hdfs.Client) error { return dc.MkdirAll(p, 0o755) })
	}
	if err := r.e.parallel(owner, jobs); err != nil {
		return err
	}
	jobs = nil
	for _, rel := range r.dirs {
		if fi := r.listed[rel]; fi != nil {
			p := staging + "/" + rel
			jobs = append(jobs, func(dc *hdfs.Client) error { return r.e.setAttrs(ctx, dc, owner, p, fi) })
		}
	}
	if err := r.e.parallel(owner, jobs); err != nil {
		return err
	}
	lk, err := look.wait()
	if err != nil {
		return nil
	}
	jobs = nil
	for _, fx := range lk.fixups {
		p := staging + "/" + fx.rel
		jobs = append(jobs, func(dc *hdfs.Client) error {
			if err := dc.Chmod(p, fx.perm); err != nil {
				return fmt.Errorf("chmod %s on dc-b: %w", p, err)
			}
			if fx.group != "" {
				if err := dc.Chown(p, owner, fx.group); err != nil {
					r.e.log.Warn("group not preserved", "file", p, "group", fx.group, "error", err)
				}
			}
			return nil
		})
	}
	for _, rel := range r.dirs {
		fi := lk.dirInfos[rel]
		if fi == nil {
			return fmt.Errorf("%w: directory %s/%s vanished", ErrSourceChanged, r.dir, rel)
		}
		if was := r.listed[rel]; was != nil && was.ModTime().Equal(fi.ModTime()) && was.Mode() == fi.Mode() {
			continue
		}
		p := staging + "/" + rel
		jobs = append(jobs, func(dc *hdfs.Client) error { return r.e.setAttrs(ctx, dc, owner, p, fi) })
	}
	return r.e.parallel(owner, jobs)
}

// seal makes the staged manifest final: written again if a record changed since it was
// written (the fresh look, or a file copied again meanwhile), then the top directory's
// permission and times, unless stageTop set them after the manifest's (final) entry.
func (r *commitRun) seal(ctx context.Context, st staged) error {
	newEntry := st.newEntry
	if final := r.manifest(); !bytes.Equal(final, st.written) {
		if err := r.e.withDst(r.owner, func(dc *hdfs.Client) error {
			return r.e.writeManifest(dc, r.staging+"/"+r.e.cfg.Manifest, final, true)
		}); err != nil {
			return err
		}
		newEntry = true
	}
	if !st.topDone || newEntry {
		return r.e.topAttrs(ctx, r.owner, r.staging, st.look.top)
	}
	return nil
}

// renameIntoPlace renames the staging directory to the destination on dc-b (creating the
// destination's parent if it is missing): the commit. A destination that appeared meanwhile
// is ErrDestConflict.
func (r *commitRun) renameIntoPlace(ctx context.Context) error {
	return r.e.withDst(r.owner, func(dc *hdfs.Client) error {
		err := r.e.times.rename(ctx, dc, r.owner, r.staging, r.dest)
		if errors.Is(err, os.ErrNotExist) {
			// The destination's parent does not exist yet.
			if err := dc.MkdirAll(path.Dir(r.dest), 0o755); err != nil {
				return fmt.Errorf("create %s on dc-b as %s: %w", path.Dir(r.dest), r.owner, err)
			}
			err = r.e.times.rename(ctx, dc, r.owner, r.staging, r.dest)
		}
		if errors.Is(err, os.ErrExist) {
			err = fmt.Errorf("%w: %s appeared during the commit: %v", ErrDestConflict, r.dest, err)
		}
		if err != nil {
			return fmt.Errorf("rename %s to %s on dc-b: %w", r.staging, r.dest, err)
		}
		return nil
	})
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
