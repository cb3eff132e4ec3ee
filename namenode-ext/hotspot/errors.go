package hotspot

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/coproc"
)

// Sentinel errors of the hotspot manager. statusTable maps them to gRPC codes at the Hints
// edge; hintclient maps the codes back.
var (
	ErrBadConfig      = errors.New("bad configuration")
	ErrInvalid        = errors.New("invalid hint")
	ErrNotFound       = errors.New("not found")
	ErrPermission     = errors.New("permission denied")
	ErrUnavailable    = errors.New("namenode unavailable")
	ErrRecovering     = errors.New("recovering hints after a restart")
	ErrTooManyHints   = errors.New("too many active hints")
	ErrQuota          = errors.New("space quota exceeded")
	ErrFinished       = errors.New("hint already finished")
	ErrNothingPlanned = errors.New("nothing to plan")
)

var statusTable = coproc.StatusCodes{
	{Err: ErrBadConfig, Code: codes.InvalidArgument},
	{Err: ErrInvalid, Code: codes.InvalidArgument},
	{Err: ErrNotFound, Code: codes.NotFound},
	{Err: ErrPermission, Code: codes.PermissionDenied},
	{Err: ErrUnavailable, Code: codes.Unavailable},
	{Err: ErrRecovering, Code: codes.Unavailable},
	{Err: ErrTooManyHints, Code: codes.ResourceExhausted},
	{Err: ErrQuota, Code: codes.ResourceExhausted},
	{Err: ErrFinished, Code: codes.FailedPrecondition},
	{Err: ErrNothingPlanned, Code: codes.FailedPrecondition},
}.With(coproc.EdgeCodes)

// ToStatus converts an error of this package to a gRPC status error.
func ToStatus(err error) error { return statusTable.ToStatus(err) }

// FromStatus turns a gRPC error of the Hints service back into a wrapped sentinel, so clients
// branch with errors.Is.
func FromStatus(err error) error { return statusTable.FromStatus(err) }

// hostCode classifies an error returned by the NameNode host service.
func hostCode(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return codes.DeadlineExceeded
	}
	return status.Code(err)
}

// hostRetryable reports whether a host error is transient (NameNode starting, in safe mode,
// standby, or the hook not connected).
func hostRetryable(err error) bool {
	switch hostCode(err) {
	case codes.Unavailable, codes.FailedPrecondition, codes.DeadlineExceeded, codes.Aborted, codes.Unknown:
		return true
	}
	return false
}

func hostMessage(err error) string {
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}
