package mirror

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// errRenamed: the checkpoint directory was renamed while a file of it was copied; the copy is
// redone at the new path and the attempt not counted.
var errRenamed = errors.New("checkpoint directory renamed during the copy")

// movedErr classifies a source file that went missing during its copy (err, at srcPath under
// dir): the checkpoint directory renamed meanwhile (errRenamed, the rename event arrived), or
// the file itself changed (ErrSourceChanged).
//
// A temporary directory renamed into place (completion "rename") shows on dc-a before its
// RENAME event reaches the mirror: a file gone from the temporary directory but present under
// the final name is errRenamePending, retried with backoff until the event moves the
// checkpoint (failing it then was the race TestMirror/RenameCompletion saw now and then).
func (e *Engine) movedErr(c *checkpoint, dir, srcPath string, err error) error {
	e.mu.Lock()
	now, r := c.srcDir, c.rule
	e.mu.Unlock()
	if now != dir {
		return errRenamed
	}
	if r != nil && r.Completion == CompleteRename && r.temp != nil {
		if in, ok := r.temp.match(dir); ok && in.rel == "" && strings.HasPrefix(srcPath, dir+"/") {
			final := r.source.expandDir(in) + srcPath[len(dir):]
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, ferr := e.host.GetFileStatus(ctx, final, nnhost.AsService)
			cancel()
			if ferr == nil {
				return fmt.Errorf("%w: %s is now %s", errRenamePending, srcPath, final)
			}
		}
	}
	return fmt.Errorf("%w: %s: %v", ErrSourceChanged, srcPath, err)
}

// errRenamePending: the checkpoint's temporary directory was renamed into place on dc-a and
// the RENAME event is still on its way; the copy is retried.
var errRenamePending = errors.New("checkpoint directory renamed into place; waiting for its event")

// transferFailedLocked sends a failed transfer t (file rel, or one of its ranges) back to the
// queue and decides what comes of err: a source change, a permission error or too many files
// fail the checkpoint; the directory renamed under the copy requeues it without counting the
// attempt; a checksum mismatch for the MaxAttempts-th time fails the checkpoint; anything else
// is retried after a backoff, which it returns with retried true. Callers hold mu.
func (e *Engine) transferFailedLocked(c *checkpoint, t *transfer, rel string, err error) (back time.Duration, retried bool) {
	t.state = fileQueued
	switch {
	case errors.Is(err, ErrSourceChanged), errors.Is(err, os.ErrPermission), errors.Is(err, ErrTooManyFiles):
		e.failLocked(c, err)
		return 0, false
	case errors.Is(err, errRenamed):
		t.attempts-- // the directory moved under us: read it at its new path
		return 0, false
	}
	back = e.retryLocked(c, err, t.attempts)
	if errors.Is(err, ErrChecksum) && t.attempts >= e.cfg.MaxAttempts {
		e.failLocked(c, fmt.Errorf("%s: %w after %d attempts", rel, err, t.attempts))
		return 0, false
	}
	t.notBefore = e.now().Add(min(back, 30*time.Second))
	return back, true
}

// retryLocked counts a transient failure of c's transfer or commit (its status note, names
// dc-b out of space as such; the retry counters and metrics) and returns the backoff after
// attempt n: RetryInterval doubled for each earlier attempt, at most 32 times it (callers cap
// the wait at 30 s). Callers hold mu.
func (e *Engine) retryLocked(c *checkpoint, err error, attempt int) time.Duration {
	c.retries++
	e.retriesAll.Add(1)
	e.metrics.retries.Inc()
	if destFull(err) {
		e.metrics.destFull.Inc()
	}
	c.lastErr = retryNote(err)
	return e.cfg.RetryInterval << min(attempt-1, 5)
}
