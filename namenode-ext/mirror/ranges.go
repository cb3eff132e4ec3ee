package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"strconv"
	"time"
)

// part is one range of a large file, copied by its own transfer into its own file on dc-b;
// the parts are then joined with HDFS concat (WebHDFS CONCAT). colinmarc/hdfs keeps at most 5
// packets of 64 KiB in flight per block stream, about 8 MB/s per stream at 40 ms RTT, so one
// stream cannot fill a WAN link: ranges in parallel can.
type part struct {
	transfer // state: fileQueued, fileCopying, fileVerified (done)
	idx      int
	off, n   int64
	crcs     []uint32 // CRC32C of every 512-byte chunk of the range
}

// splits reports whether a file of size is copied in ranges.
func (e *Engine) splits(size int64) bool {
	return e.cfg.RangeSize > 0 && e.cfg.DestHTTP != "" && size >= 2*e.cfg.RangeSize
}

// splitLocked cuts f into ranges of (nearly) equal length, each at most RangeSize and a
// multiple of 64 KiB except the last: ranges that start together also finish together, so the
// link is not left to one straggling stream at the end of a file (a 30 MiB file is 4 ranges
// of 7.5 MiB, not 3 of 8 and one of 6).
func (e *Engine) splitLocked(f *file) {
	f.parts = nil
	n := (f.size + e.cfg.RangeSize - 1) / e.cfg.RangeSize
	const align = 64 << 10
	each := ((f.size+n-1)/n + align - 1) / align * align
	for off, i := int64(0), 0; off < f.size; off, i = off+each, i+1 {
		f.parts = append(f.parts, &part{idx: i, off: off, n: min(each, f.size-off)})
	}
	f.snap = srcInfo{}
}

// partPath is where a range lands on dc-b: the first range is the file itself (the concat
// target), the others hidden files beside it (concat wants them in the same directory).
func partPath(staging, rel string, i int) string {
	if i == 0 {
		return staging + "/" + rel
	}
	return staging + "/" + path.Join(path.Dir(rel), "."+path.Base(rel)+".nt-part-"+strconv.Itoa(i))
}

// copyPart streams one range as the owner, collecting chunk CRCs; the source must stay the
// file the first range saw.
func (e *Engine) copyPart(ctx context.Context, c *checkpoint, f *file, p *part) error {
	e.mu.Lock()
	dir, owner, staging, urgent := c.srcDir, c.owner, c.staging, c.urgent
	e.mu.Unlock()
	srcPath := dir + "/" + f.rel
	sc, err := e.src.get(owner)
	if err != nil {
		return err
	}
	srcOK := true
	defer func() { e.src.put(owner, sc, srcOK) }()
	check := func() (srcInfo, error) {
		fi, err := sc.Stat(srcPath)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return srcInfo{}, e.movedErr(c, dir, srcPath, err)
			}
			srcOK = !isConnErr(err)
			return srcInfo{}, fmt.Errorf("stat %s on dc-a: %w", srcPath, err)
		}
		s := infoOf(fi)
		e.mu.Lock()
		defer e.mu.Unlock()
		if f.snap.id == 0 {
			f.snap = s
		}
		if s.id != f.snap.id || s.size != f.snap.size || s.mtime != f.snap.mtime {
			return s, fmt.Errorf("%w: %s (size %d -> %d, mtime %d -> %d)", ErrSourceChanged, srcPath, f.snap.size, s.size, f.snap.mtime, s.mtime)
		}
		return s, nil
	}
	snap, err := check()
	if err != nil {
		return err
	}
	if p.off+p.n > snap.size {
		return fmt.Errorf("%w: %s is %d bytes, range ends at %d", ErrSourceChanged, srcPath, snap.size, p.off+p.n)
	}
	r, err := sc.Open(srcPath)
	if err != nil {
		return fmt.Errorf("open %s on dc-a: %w", srcPath, err)
	}
	defer r.Close()
	if _, err := r.Seek(p.off, io.SeekStart); err != nil {
		return fmt.Errorf("seek %s on dc-a: %w", srcPath, err)
	}
	dc, err := e.dst.get(owner)
	if err != nil {
		return fmt.Errorf("dc-b: %w", err)
	}
	dstOK := true
	defer func() { e.dst.put(owner, dc, dstOK) }()
	if err := e.ensureDir(c, dc, path.Dir(f.rel)); err != nil {
		dstOK = !isConnErr(err)
		return err
	}
	dst := partPath(staging, f.rel, p.idx)
	perm := snap.perm
	if p.idx > 0 {
		perm = 0o600
	}
	// A range file left by an earlier attempt (or a run before a crash) is replaced; the first
	// attempt does not pay a WAN round trip to look for one.
	w, err := dc.CreateFile(dst, snap.repl, snap.blockSize, perm)
	if errors.Is(err, os.ErrExist) {
		if rerr := dc.Remove(dst); rerr == nil {
			w, err = dc.CreateFile(dst, snap.repl, snap.blockSize, perm)
		}
	}
	if err != nil {
		dstOK = !isConnErr(err)
		return fmt.Errorf("create %s on dc-b: %w", dst, err)
	}
	crcs := make([]uint32, 0, (p.n+511)/512)
	buf := make([]byte, 64<<10) // a multiple of 512: chunks never straddle reads
	var done int64
	for done < p.n {
		if !urgent {
			e.waitBulk(ctx, c)
		}
		k, rerr := io.ReadFull(r, buf[:min(int64(len(buf)), p.n-done)])
		if k > 0 {
			e.pacer.wait(ctx, k)
			if _, werr := w.Write(buf[:k]); werr != nil {
				w.Close()
				dstOK = false
				return fmt.Errorf("write %s on dc-b: %w", dst, werr)
			}
			for i := 0; i < k; i += 512 {
				crcs = append(crcs, crc32.Checksum(buf[i:min(i+512, k)], castagnoli))
			}
			done += int64(k)
			e.mu.Lock()
			p.copied += int64(k)
			e.mu.Unlock()
			e.inFlightB.Add(int64(k))
			c.streamed.Add(int64(k))
			e.linkBytes.Add(int64(k))
			e.metrics.bytes.Add(float64(k))
		}
		if rerr != nil {
			w.Close()
			srcOK = !isConnErr(rerr)
			return fmt.Errorf("read %s on dc-a at %d: %w", srcPath, p.off+done, rerr)
		}
		if ctx.Err() != nil {
			w.Close()
			return ctx.Err()
		}
	}
	if err := closeWriter(w); err != nil {
		dstOK = !isConnErr(err)
		return fmt.Errorf("close %s on dc-b: %w", dst, err)
	}
	if _, err := check(); err != nil {
		return err
	}
	e.mu.Lock()
	p.crcs = crcs
	e.mu.Unlock()
	return nil
}

// finishPart records a range's outcome; the worker finishing the last range joins the file.
func (e *Engine) finishPart(ctx context.Context, c *checkpoint, f *file, p *part, err error) {
	e.mu.Lock()
	c.inFlight--
	e.inFlightB.Add(-p.copied)
	e.copiesAll.Add(1)
	c.copies++
	e.metrics.copies.Inc()
	last := false
	switch {
	case c.state.terminal():
	case err == nil:
		p.state = fileVerified
		last = true
		for _, q := range f.parts {
			last = last && q.state == fileVerified
		}
	default:
		if back, retried := e.transferFailedLocked(c, &p.transfer, f.rel, err); retried {
			e.log.Info("range transfer retried", "checkpoint", c.key, "file", f.rel, "range", p.idx, "error", err, "in", back)
		}
	}
	if last {
		// The join is this file's final transfer step.
		f.state = fileCopying
		f.attempts++
		f.copied = 0
		c.inFlight++
	}
	e.changedLocked(c)
	e.cond.Broadcast()
	e.mu.Unlock()
	if last {
		e.finishCopy(c, f, e.joinParts(ctx, c, f))
	}
}

// joinParts concatenates the ranges on dc-b, checks the checksum assembled from the ranges'
// CRCs against dc-a's, and gives the file its times and group.
func (e *Engine) joinParts(ctx context.Context, c *checkpoint, f *file) error {
	e.mu.Lock()
	dir, owner, staging, group := c.srcDir, c.owner, c.staging, c.group
	snap := f.snap
	parts := append([]*part(nil), f.parts...)
	e.mu.Unlock()
	srcPath := dir + "/" + f.rel
	sum := newFileChecksum(snap.blockSize, 512)
	left := snap.size
	for _, p := range parts {
		for _, crc := range p.crcs {
			n := min(left, 512)
			sum.addChunk(crc, n)
			left -= n
		}
	}
	if left != 0 {
		return fmt.Errorf("%w: ranges of %s cover %d of %d bytes", ErrChecksum, f.rel, snap.size-left, snap.size)
	}
	var wantHex string
	sc, err := e.src.get(owner)
	if err != nil {
		return err
	}
	defer e.src.put(owner, sc, true)
	dc, err := e.dst.get(owner)
	if err != nil {
		return err
	}
	ok := false
	defer func() { e.dst.put(owner, dc, ok) }()
	// dc-a's checksum and a last look at the source (local) while dc-b joins the ranges (a
	// round trip); a join whose source check fails is redone with the ranges.
	var fi os.FileInfo
	var errSrc error
	checked := make(chan struct{})
	go func() {
		defer close(checked)
		r, err := sc.Open(srcPath)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				errSrc = e.movedErr(c, dir, srcPath, err)
			} else {
				errSrc = fmt.Errorf("open %s on dc-a: %w", srcPath, err)
			}
			return
		}
		want, err := r.Checksum()
		r.Close()
		if err != nil {
			errSrc = fmt.Errorf("checksum %s on dc-a: %w", srcPath, err)
			return
		}
		if got := sum.Sum(); !bytes.Equal(got, want) {
			errSrc = fmt.Errorf("%w: %s: ranges %x, dc-a %x", ErrChecksum, f.rel, got, want)
			return
		}
		if fi, err = sc.Stat(srcPath); err != nil {
			errSrc = e.movedErr(c, dir, srcPath, err)
			return
		}
		if after := infoOf(fi); after.id != snap.id || after.size != snap.size || after.mtime != snap.mtime {
			errSrc = fmt.Errorf("%w: %s changed while its ranges were copied", ErrSourceChanged, srcPath)
		}
		wantHex = fmt.Sprintf("%x", want)
	}()
	target := partPath(staging, f.rel, 0)
	var srcs []string
	for _, p := range parts[1:] {
		srcs = append(srcs, partPath(staging, f.rel, p.idx))
	}
	errJoin := e.times.concat(ctx, owner, target, srcs)
	<-checked
	if errSrc != nil || errJoin != nil {
		e.resetParts(f)
		if errSrc != nil {
			return errSrc
		}
		return errJoin
	}
	after := infoOf(fi)
	if after.group != "" && after.group != group {
		if err := dc.Chown(target, owner, after.group); err != nil {
			e.log.Warn("group not preserved", "file", target, "group", after.group, "error", err)
		}
	}
	mt := time.UnixMilli(after.mtime)
	if err := e.times.set(ctx, dc, owner, target, mt); err != nil {
		return fmt.Errorf("set times of %s on dc-b: %w", target, err)
	}
	ok = true
	e.mu.Lock()
	f.size = after.size
	f.rec = fileRecord{Path: f.rel, Size: after.size, MtimeMs: after.mtime, FileID: after.id,
		Perm: uint32(after.perm.Perm()), Group: after.group, Checksum: wantHex}
	e.mu.Unlock()
	return nil
}

// resetParts sends every range of f back to the queue (the join failed).
func (e *Engine) resetParts(f *file) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f.parts = nil
}
