package mirror

import (
	"errors"
	"strings"

	"github.com/newtricks/newtricks/internal/coproc"
)

// Sentinel errors of the mirror. The gRPC edge maps them with coproc.ToStatus (they wrap
// coproc's sentinels), mirrorclient maps the codes back.
var (
	// ErrSourceChanged: a source file changed, vanished or was replaced while it was being
	// copied, or a checkpoint's files changed after it completed. The checkpoint fails.
	ErrSourceChanged = errors.New("source changed during the copy")
	// ErrDestConflict: the destination directory exists and was not committed by this mirror.
	ErrDestConflict = errors.New("destination exists and is not this checkpoint's mirror")
	// ErrTooManyFiles: a checkpoint has more files than newtricks.mirror.max-files.
	ErrTooManyFiles = errors.New("checkpoint has too many files")
	// ErrChecksum: the bytes copied do not have the source's checksum (retried).
	ErrChecksum = errors.New("checksum mismatch")
	// ErrUnknownRule, ErrNotFound, ErrNotSignal: bad API requests.
	ErrUnknownRule = wrapErr(coproc.ErrInvalid, "unknown rule")
	ErrNotFound    = wrapErr(coproc.ErrNotFound, "checkpoint not known to the mirror")
	ErrNotSignal   = wrapErr(coproc.ErrPrecondition, "rule does not complete by signal")
	ErrRecovering  = wrapErr(coproc.ErrUnavailable, "mirror is recovering its journal")
	ErrPermission  = wrapErr(coproc.ErrPermission, "checkpoint belongs to another user")
	// ErrRefusedOwner: a checkpoint the mirror will not act for (the superuser's).
	ErrRefusedOwner = wrapErr(coproc.ErrPermission, "checkpoint owner refused")
	// ErrUserLimit: one user's share of the mirror is used up (checkpoints, urgent marks).
	ErrUserLimit = wrapErr(coproc.ErrResourceLimit, "per-user limit reached")
)

type sentinel struct {
	msg  string
	base error
}

func wrapErr(base error, msg string) error { return &sentinel{msg: msg, base: base} }
func (s *sentinel) Error() string          { return s.msg }
func (s *sentinel) Unwrap() error          { return s.base }

// destFull reports whether dc-b refused a write or a rename for space: a space or namespace
// quota (DSQuotaExceededException, NSQuotaExceededException, also through WebHDFS) or no
// DataNode with room for a block. Such errors are retried (with backoff) until an admin makes
// room; they never fail the checkpoint, and a commit that hits one leaves nothing at the
// destination (the rename into place is the commit).
func destFull(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	for _, m := range []string{"QuotaExceededException", "quota is exceeded", "could only be written to 0 of the",
		"DiskOutOfSpaceException", "No space left on device", "not enough space"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// retryNote is what status shows for a transient error: dc-b out of space or quota is named as
// such, so an admin sees what to fix.
func retryNote(err error) string {
	if destFull(err) {
		return "dc-b out of space or quota: " + err.Error()
	}
	return err.Error()
}
