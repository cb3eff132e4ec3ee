package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/internal/hdfsio"
)

// hdfsStatus is what colinmarc/hdfs FileInfo.Sys() returns (HdfsFileStatusProto), by its
// getters: the package is internal to colinmarc/hdfs.
type hdfsStatus interface {
	GetFileId() uint64
	GetBlocksize() uint64
	GetBlockReplication() uint32
}

// fileRecord is what the journal and the manifest hold about one verified file.
type fileRecord struct {
	Path     string `json:"p"`
	Size     int64  `json:"l"`
	MtimeMs  int64  `json:"m"`
	FileID   uint64 `json:"id"`
	Perm     uint32 `json:"perm"`
	Group    string `json:"g,omitempty"`
	Checksum string `json:"md5md5crc32c"`
}

// srcInfo is a source file's identity, compared before and after a copy.
type srcInfo struct {
	size, mtime int64
	id          uint64
	blockSize   int64
	repl        int
	perm        os.FileMode
	group       string
}

func infoOf(fi os.FileInfo) srcInfo {
	s := srcInfo{size: fi.Size(), mtime: fi.ModTime().UnixMilli(), perm: fi.Mode().Perm(), blockSize: 128 << 20, repl: 3}
	if hfi, ok := fi.(*hdfs.FileInfo); ok {
		s.group = hfi.OwnerGroup()
	}
	if st, ok := fi.Sys().(hdfsStatus); ok {
		s.id, s.blockSize, s.repl = st.GetFileId(), int64(st.GetBlocksize()), int(st.GetBlockReplication())
	}
	if fi.Mode()&os.ModeSticky != 0 {
		s.perm |= os.ModeSticky
	}
	return s
}

// worker copies files (or ranges of large files) until ctx ends.
func (e *Engine) worker(ctx context.Context) {
	for {
		c, f, p := e.next()
		if c == nil {
			return
		}
		if p != nil {
			e.finishPart(ctx, c, f, p, e.copyPart(ctx, c, f, p))
			continue
		}
		err := e.copyFile(ctx, c, f)
		e.finishCopy(c, f, err)
	}
}

// next blocks until a file (or a range of one) may be copied, or the engine stops, and claims
// it: urgent checkpoints first, then the oldest checkpoint first, files in the order they
// closed. While an urgent checkpoint has work, bulk files wait.
func (e *Engine) next() (*checkpoint, *file, *part) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		if e.stopped {
			return nil, nil, nil
		}
		if c, f, p, wait := e.pickLocked(); f != nil {
			c.inFlight++
			if p != nil {
				p.state = fileCopying
				p.attempts++
				p.copied = 0
				return c, f, p
			}
			f.state = fileCopying
			f.attempts++
			f.copied = 0
			f.recReady = false
			return c, f, nil
		} else if wait > 0 {
			// Something is backing off: wake up for it.
			t := time.AfterFunc(wait, func() { e.mu.Lock(); e.cond.Broadcast(); e.mu.Unlock() })
			e.cond.Wait()
			t.Stop()
		} else {
			e.cond.Wait()
		}
	}
}

func (e *Engine) pickLocked() (*checkpoint, *file, *part, time.Duration) {
	var cands []*checkpoint
	for _, c := range e.ckpts {
		if !c.state.terminal() && c.resolved {
			if e.urgentLive > 0 && !c.urgent {
				continue
			}
			cands = append(cands, c)
		}
	}
	sortCheckpoints(cands)
	now := e.now()
	var wait time.Duration
	later := func(t time.Time) bool {
		if d := t.Sub(now); d > 0 {
			if wait == 0 || d < wait {
				wait = d
			}
			return true
		}
		return false
	}
	for _, c := range cands {
		for _, f := range c.order {
			if f.state != fileQueued || later(f.notBefore) {
				continue
			}
			if f.parts == nil && e.splits(f.size) {
				e.splitLocked(f)
			}
			if f.parts == nil {
				return c, f, nil, 0
			}
			for _, p := range f.parts {
				if p.state == fileQueued && !later(p.notBefore) {
					return c, f, p, 0
				}
			}
		}
	}
	return nil, nil, nil, wait
}

func sortCheckpoints(cs []*checkpoint) {
	less := func(a, b *checkpoint) bool {
		if a.urgent != b.urgent {
			return a.urgent
		}
		return a.firstSeen.Before(b.firstSeen)
	}
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && less(cs[j], cs[j-1]); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// finishCopy records a transfer's outcome.
func (e *Engine) finishCopy(c *checkpoint, f *file, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c.inFlight--
	e.inFlightB.Add(-f.copied)
	e.copiesAll.Add(1)
	c.copies++
	e.metrics.copies.Inc()
	switch {
	case c.state.terminal():
	case err == nil:
		f.state = fileCopied
		e.journal.add(c, f)
		if c.listed && !c.pendingLocked() {
			signal(e.flushNow) // the checkpoint's last transfer: journal it now
			if c.copiedAt.IsZero() {
				c.copiedAt = e.now()
			}
			signal(e.kick) // and the commit prepares meanwhile (it renames once journaled)
		}
	default:
		if back, retried := e.transferFailedLocked(c, &f.transfer, f.rel, err); retried {
			e.log.Info("transfer retried", "checkpoint", c.key, "file", f.rel, "error", err, "in", back)
		}
	}
	e.recountUrgentLocked()
	e.changedLocked(c)
	e.cond.Broadcast()
}

// copyFile streams one file from dc-a to the staging directory on dc-b as the checkpoint's
// owner, checksumming while streaming, then checks the source did not change and that the
// streamed checksum equals dc-a's (and dc-b's with VerifyDest).
func (e *Engine) copyFile(ctx context.Context, c *checkpoint, f *file) (err error) {
	e.mu.Lock()
	dir, owner, staging, urgent, group := c.srcDir, c.owner, c.staging, c.urgent, c.group
	e.mu.Unlock()
	srcPath := dir + "/" + f.rel
	sc, err := e.src.get(owner)
	if err != nil {
		return err
	}
	srcOK := true
	defer func() { e.src.put(owner, sc, srcOK) }()
	fi, err := sc.Stat(srcPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return e.movedErr(c, dir, srcPath, err)
		}
		srcOK = !isConnErr(err)
		return fmt.Errorf("stat %s on dc-a: %w", srcPath, err)
	}
	before := infoOf(fi)
	r, err := sc.Open(srcPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return e.movedErr(c, dir, srcPath, err)
		}
		return fmt.Errorf("open %s on dc-a: %w", srcPath, err)
	}
	defer r.Close()

	dc, err := e.dst.get(owner)
	if err != nil {
		return fmt.Errorf("dc-b: %w", err)
	}
	dstOK := true
	defer func() { e.dst.put(owner, dc, dstOK) }()
	dstPath := staging + "/" + f.rel
	if err := e.ensureDir(c, dc, path.Dir(f.rel)); err != nil {
		dstOK = !isConnErr(err)
		return err
	}
	if f.attempts > 1 {
		if err := dc.Remove(dstPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			dstOK = !isConnErr(err)
			return fmt.Errorf("remove partial %s on dc-b: %w", dstPath, err)
		}
	}
	w, err := dc.CreateFile(dstPath, before.repl, before.blockSize, before.perm)
	if err != nil {
		dstOK = !isConnErr(err)
		if errors.Is(err, os.ErrExist) {
			// A copy from before a crash, never journaled: replace it.
			if rerr := dc.Remove(dstPath); rerr == nil {
				w, err = dc.CreateFile(dstPath, before.repl, before.blockSize, before.perm)
			}
		}
		if err != nil {
			return fmt.Errorf("create %s on dc-b: %w", dstPath, err)
		}
	}
	sum := newFileChecksum(before.blockSize, 512)
	buf := make([]byte, 64<<10)
	var n int64
	for {
		if !urgent {
			e.waitBulk(ctx, c)
		}
		k, rerr := r.Read(buf)
		if k > 0 {
			e.pacer.wait(ctx, k)
			if _, werr := w.Write(buf[:k]); werr != nil {
				w.Close()
				dstOK = false
				return fmt.Errorf("write %s on dc-b: %w", dstPath, werr)
			}
			sum.Write(buf[:k])
			n += int64(k)
			e.mu.Lock()
			f.copied += int64(k)
			e.mu.Unlock()
			e.inFlightB.Add(int64(k))
			c.streamed.Add(int64(k))
			e.linkBytes.Add(int64(k))
			e.metrics.bytes.Add(float64(k))
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			w.Close()
			srcOK = !isConnErr(rerr)
			if errors.Is(rerr, os.ErrNotExist) {
				return e.movedErr(c, dir, srcPath, rerr)
			}
			return fmt.Errorf("read %s on dc-a: %w", srcPath, rerr)
		}
		if ctx.Err() != nil {
			w.Close()
			return ctx.Err()
		}
	}
	// dc-a's side of the verification (local) while dc-b completes the file (round trips): the
	// source must be the same file, unchanged, fully read, with the checksum streamed.
	type srcCheck struct {
		after srcInfo
		want  []byte
		err   error
	}
	checked := make(chan srcCheck, 1)
	go func() {
		var res srcCheck
		defer func() { checked <- res }()
		fi2, err := sc.Stat(srcPath)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				res.err = e.movedErr(c, dir, srcPath, err)
			} else {
				res.err = fmt.Errorf("stat %s on dc-a: %w", srcPath, err)
			}
			return
		}
		after := infoOf(fi2)
		res.after = after
		if after.id != before.id || after.size != before.size || after.mtime != before.mtime || n != before.size {
			res.err = fmt.Errorf("%w: %s (size %d -> %d, read %d, mtime %d -> %d, id %d -> %d)", ErrSourceChanged,
				srcPath, before.size, after.size, n, before.mtime, after.mtime, before.id, after.id)
			return
		}
		if res.want, err = r.Checksum(); err != nil {
			res.err = fmt.Errorf("checksum %s on dc-a: %w", srcPath, err)
		}
	}()
	closed := make(chan error, 1)
	go func() { closed <- closeWriter(w) }()
	res := <-checked
	got := sum.Sum()
	rec := fileRecord{Path: f.rel, Size: res.after.size, MtimeMs: res.after.mtime, FileID: res.after.id,
		Perm: uint32(res.after.perm.Perm()), Group: res.after.group, Checksum: fmt.Sprintf("%x", res.want)}
	if res.err == nil && bytes.Equal(got, res.want) && !e.cfg.VerifyDest {
		// The bytes are checked: the commit may write this record into the manifest while
		// dc-b completes the file (it renames only after the file is copied and journaled).
		e.recordKnown(c, f, rec)
	}
	closeErr := <-closed
	if closeErr != nil {
		dstOK = !isConnErr(closeErr)
		return fmt.Errorf("close %s on dc-b: %w", dstPath, closeErr)
	}
	if res.err != nil {
		return res.err
	}
	after, want := res.after, res.want
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%w: %s: streamed %x, dc-a %x", ErrChecksum, f.rel, got, want)
	}
	if e.cfg.VerifyDest {
		dr, err := dc.Open(dstPath)
		if err != nil {
			return fmt.Errorf("open %s on dc-b: %w", dstPath, err)
		}
		ds, err := dr.Checksum()
		dr.Close()
		if err != nil {
			return fmt.Errorf("checksum %s on dc-b: %w", dstPath, err)
		}
		if !bytes.Equal(ds, want) {
			return fmt.Errorf("%w: %s: dc-b %x, dc-a %x", ErrChecksum, f.rel, ds, want)
		}
	}
	// Permission changed during the copy (metadata only: id, length and mtime are the same).
	if after.perm != before.perm {
		if err := dc.Chmod(dstPath, after.perm); err != nil {
			dstOK = !isConnErr(err)
			return fmt.Errorf("chmod %s on dc-b: %w", dstPath, err)
		}
	}
	// Files inherit the staging directory's group (the checkpoint's); fix the others.
	if after.group != "" && after.group != group {
		if err := dc.Chown(dstPath, owner, after.group); err != nil {
			e.log.Warn("group not preserved", "file", dstPath, "group", after.group, "error", err)
		}
	}
	mt := time.UnixMilli(after.mtime)
	if err := e.times.set(ctx, dc, owner, dstPath, mt); err != nil {
		dstOK = !isConnErr(err)
		return fmt.Errorf("set times of %s on dc-b: %w", dstPath, err)
	}
	e.mu.Lock()
	f.size = after.size
	f.rec = rec
	e.mu.Unlock()
	return nil
}

// recordKnown publishes a file's checked record while its copy finishes on dc-b; with the
// last one of a complete checkpoint the commit starts.
func (e *Engine) recordKnown(c *checkpoint, f *file, rec fileRecord) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f.state != fileCopying || c.state.terminal() {
		return
	}
	f.rec, f.recReady = rec, true
	if c.listed && c.recordsKnownLocked() {
		signal(e.kick)
	}
}

// closeWriter closes, retrying for up to 30 s while the NameNode waits for the DataNodes'
// block reports; each retry sends the last block again (hdfsio.CloseFile: colinmarc/hdfs's
// own second Close cannot complete a multi-block file whose first complete came too early).
func closeWriter(w *hdfs.FileWriter) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return hdfsio.CloseFile(ctx, w)
}

// ensureDir creates the staging directory and rel below it on dc-b as the owner, once each.
func (e *Engine) ensureDir(c *checkpoint, dc *hdfs.Client, rel string) error {
	c.mkdirMu.Lock()
	defer c.mkdirMu.Unlock()
	e.mu.Lock()
	top, made := c.dirsMade["."], c.dirsMade[rel]
	e.mu.Unlock()
	if !top {
		if err := dc.Mkdir(c.staging, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create staging %s on dc-b: %w", c.staging, err)
		}
		// Files inherit their directory's group: give it the checkpoint's. The owner must be
		// in that group on dc-b; if not, the group is not preserved (reported, not fatal).
		if c.group != "" {
			if err := dc.Chown(c.staging, c.owner, c.group); err != nil {
				e.log.Warn("group not preserved", "checkpoint", c.key, "group", c.group, "error", err)
				e.mu.Lock()
				c.lastErr = fmt.Sprintf("group %s not preserved: %v", c.group, err)
				e.mu.Unlock()
			}
		}
		e.mu.Lock()
		c.dirsMade["."] = true
		e.mu.Unlock()
	}
	if made || rel == "." || rel == "" {
		return nil
	}
	p := c.staging + "/" + rel
	if err := dc.MkdirAll(p, 0o755); err != nil {
		return fmt.Errorf("create %s on dc-b: %w", p, err)
	}
	e.mu.Lock()
	c.dirsMade[rel] = true
	e.mu.Unlock()
	return nil
}

// waitBulk pauses a bulk transfer while an urgent checkpoint has work.
func (e *Engine) waitBulk(ctx context.Context, c *checkpoint) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for e.urgentLive > 0 && !c.urgent && !e.stopped && ctx.Err() == nil {
		e.cond.Wait()
	}
}

// isConnErr reports whether err suggests the client's connection is broken.
func isConnErr(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "connection") || strings.Contains(s, "EOF") || strings.Contains(s, "broken pipe") ||
		strings.Contains(s, "timeout") || strings.Contains(s, "socks")
}

// pacer caps the bytes per second of all transfers together.
type pacer struct {
	mu   sync.Mutex
	rate float64
	next time.Time
}

func newPacer(rate int64) *pacer { return &pacer{rate: float64(rate)} }

func (p *pacer) wait(ctx context.Context, n int) {
	if p.rate <= 0 {
		return
	}
	p.mu.Lock()
	now := time.Now()
	start := p.next
	if start.Before(now) {
		start = now
	}
	p.next = start.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
	until := p.next
	p.mu.Unlock()
	if d := time.Until(until); d > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
}
