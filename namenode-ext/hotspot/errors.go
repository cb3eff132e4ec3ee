package hotspot

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/authn"
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

var statusTable = []struct {
	err  error
	code codes.Code
}{
	{ErrBadConfig, codes.InvalidArgument},
	{ErrInvalid, codes.InvalidArgument},
	{ErrNotFound, codes.NotFound},
	{ErrPermission, codes.PermissionDenied},
	{ErrUnavailable, codes.Unavailable},
	{ErrRecovering, codes.Unavailable},
	{ErrTooManyHints, codes.ResourceExhausted},
	{ErrQuota, codes.ResourceExhausted},
	{ErrFinished, codes.FailedPrecondition},
	{ErrNothingPlanned, codes.FailedPrecondition},
	{authn.ErrUnauthenticated, codes.Unauthenticated},
	{authn.ErrForbidden, codes.PermissionDenied},
	{authn.ErrNoUser, codes.InvalidArgument},
	{context.DeadlineExceeded, codes.DeadlineExceeded},
	{context.Canceled, codes.Canceled},
}

// ToStatus converts an error of this package to a gRPC status error.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	for _, row := range statusTable {
		if errors.Is(err, row.err) {
			return status.Error(row.code, err.Error())
		}
	}
	return status.Error(codes.Internal, err.Error())
}

// FromStatus turns a gRPC error of the Hints service back into a wrapped sentinel, so clients
// branch with errors.Is.
func FromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	for _, row := range statusTable {
		if row.code == st.Code() {
			return &statusError{st: st, sentinel: row.err}
		}
	}
	return err
}

type statusError struct {
	st       *status.Status
	sentinel error
}

func (e *statusError) Error() string { return e.st.Message() }
func (e *statusError) Unwrap() error { return e.sentinel }

// Is matches every sentinel sharing the status code: the wire cannot tell them apart.
func (e *statusError) Is(target error) bool {
	for _, row := range statusTable {
		if row.err == target {
			return row.code == e.st.Code()
		}
	}
	return false
}
func (e *statusError) GRPCStatus() *status.Status { return e.st }

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
