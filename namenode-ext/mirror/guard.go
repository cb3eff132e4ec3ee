package mirror

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// What a caller of the Mirror API may ask, and how much of the mirror one user may take
// (issue 25). Every request field is hostile: a key is checked before anything is stored for
// it; Urgent and Complete need write access to the checkpoint's directory on dc-a, asked of
// the NameNode as the caller; what a user may leave behind (urgent marks for checkpoints not
// seen yet, checkpoints tracked, waiting streams) is bounded per user and in total.

// maxJobBytes bounds a job name: one path component (part of one), as HDFS's
// dfs.namenode.fs-limits.max-component-length (255) does.
const maxJobBytes = 255

// checkKey refuses a key no checkpoint can have, before anything is stored or looked up.
func checkKey(k Key) error {
	switch {
	case k.Job == "" || k.Step < 0:
		return fmt.Errorf("%w: job is required and step must be >= 0", coproc.ErrInvalid)
	case len(k.Job) > maxJobBytes:
		return fmt.Errorf("%w: job name of %d bytes, at most %d", coproc.ErrInvalid, len(k.Job), maxJobBytes)
	case strings.ContainsAny(k.Job, "/\x00") || k.Job == "." || k.Job == "..":
		return fmt.Errorf("%w: job name %q is not part of one path component", coproc.ErrInvalid, k.Job)
	case len(k.Rule) > 64:
		return fmt.Errorf("%w: rule name of %d bytes", ErrUnknownRule, len(k.Rule))
	}
	return nil
}

// pendingUrgent is an Urgent for a checkpoint not seen yet: who asked, and when (it expires
// after Config.UrgentPendingTTL).
type pendingUrgent struct {
	user  string
	admin bool
	at    time.Time
}

// expireUrgentLocked forgets pending urgent marks older than the TTL.
func (e *Engine) expireUrgentLocked(now time.Time) {
	for k, p := range e.urgentSoon {
		if now.Sub(p.at) > e.cfg.UrgentPendingTTL {
			delete(e.urgentSoon, k)
		}
	}
}

// urgentCountLocked is how many urgent marks user holds: pending ones, and active urgent
// checkpoints it marked (an urgent checkpoint pauses every bulk copy).
func (e *Engine) urgentCountLocked(user string) int {
	n := 0
	for _, p := range e.urgentSoon {
		if p.user == user {
			n++
		}
	}
	for _, c := range e.ckpts {
		if c.urgent && c.urgentBy == user && !c.state.terminal() {
			n++
		}
	}
	return n
}

// mayWrite asks the NameNode, as user, whether user may write dir (the checkpoint's
// directory): ErrNotFound, ErrPermission, or an unavailable error.
func (e *Engine) mayWrite(ctx context.Context, dir, user string) error {
	res, err := e.host.CheckAccess(ctx, []string{dir}, "WRITE", nnhost.AsUser(user))
	if err == nil && len(res) != 1 {
		err = fmt.Errorf("host answered %d results for 1 path", len(res))
	}
	if err != nil {
		return fmt.Errorf("%w: check access to %s: %v", coproc.ErrUnavailable, dir, err)
	}
	return accessErr(dir, user, res[0])
}

// mayWriteNearest is mayWrite on dir, or, if it does not exist yet, on its nearest existing
// ancestor (where the checkpoint would be created): one host call.
func (e *Engine) mayWriteNearest(ctx context.Context, dir, user string) error {
	var paths []string
	for p := dir; ; p = path.Dir(p) {
		paths = append(paths, p)
		if p == "/" || len(paths) >= 64 {
			break
		}
	}
	res, err := e.host.CheckAccess(ctx, paths, "WRITE", nnhost.AsUser(user))
	if err == nil && len(res) != len(paths) {
		err = fmt.Errorf("host answered %d results for %d paths", len(res), len(paths))
	}
	if err != nil {
		return fmt.Errorf("%w: check access to %s: %v", coproc.ErrUnavailable, dir, err)
	}
	for i, r := range res {
		if r.Code != codes.NotFound {
			return accessErr(paths[i], user, r)
		}
	}
	return fmt.Errorf("%w: %s", ErrNotFound, dir)
}

func accessErr(p, user string, r nnhost.AccessResult) error {
	switch r.Code {
	case codes.OK:
		return nil
	case codes.NotFound:
		return fmt.Errorf("%w: %s", ErrNotFound, p)
	case codes.PermissionDenied:
		return fmt.Errorf("%w: %s may not write %s", ErrPermission, user, p)
	}
	return fmt.Errorf("%w: check access to %s: %s", coproc.ErrUnavailable, p, status.New(r.Code, r.Message).Message())
}

// activeOfOwnerLocked counts the owner's checkpoints being mirrored, besides skip.
func (e *Engine) activeOfOwnerLocked(owner string, skip *checkpoint) int {
	n := 0
	for _, c := range e.ckpts {
		if c != skip && c.resolved && c.owner == owner && !c.state.terminal() {
			n++
		}
	}
	return n
}

// refuseOwnerLocked says why a checkpoint of owner is not mirrored: the HDFS superuser's
// (the mirror would act as the superuser on dc-b) unless newtricks.mirror.allow-superuser,
// or the owner has MaxCheckpointsPerUser checkpoints in flight already.
func (e *Engine) refuseOwnerLocked(owner string, c *checkpoint) error {
	if owner != "" && owner == e.superuser && !e.cfg.AllowSuperuser {
		return fmt.Errorf("%w: owned by the HDFS superuser %s: not mirrored (the mirror would act as the superuser on dc-b; newtricks.mirror.allow-superuser)",
			ErrRefusedOwner, owner)
	}
	if n := e.activeOfOwnerLocked(owner, c); n >= e.cfg.MaxCheckpointsPerUser {
		return fmt.Errorf("%w: %s has %d checkpoints in flight, at most %d (newtricks.mirror.max-checkpoints.per-user)",
			ErrUserLimit, owner, n, e.cfg.MaxCheckpointsPerUser)
	}
	return nil
}

// enterWait admits one Wait stream of user, within MaxWaits and MaxWaitsPerUser; leave
// releases it.
func (e *Engine) enterWait(user string) (leave func(), err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.waitsAll >= e.cfg.MaxWaits {
		return nil, fmt.Errorf("%w: %d Wait streams open, at most %d (newtricks.mirror.max-waits)", coproc.ErrResourceLimit, e.waitsAll, e.cfg.MaxWaits)
	}
	if e.waits[user] >= e.cfg.MaxWaitsPerUser {
		return nil, fmt.Errorf("%w: %s has %d Wait streams open, at most %d (newtricks.mirror.max-waits.per-user)",
			coproc.ErrResourceLimit, user, e.waits[user], e.cfg.MaxWaitsPerUser)
	}
	e.waitsAll++
	e.waits[user]++
	return func() {
		e.mu.Lock()
		e.waitsAll--
		if e.waits[user]--; e.waits[user] <= 0 {
			delete(e.waits, user)
		}
		e.mu.Unlock()
	}, nil
}
