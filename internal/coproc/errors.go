package coproc

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/authn"
)

// Sentinel errors shared by the co-processes' public APIs. ToStatus maps them to gRPC codes;
// errors that already carry a gRPC status (from the Java host) keep their code.
var (
	ErrInvalid       = errors.New("invalid argument")
	ErrNotFound      = errors.New("not found")
	ErrPermission    = errors.New("permission denied")
	ErrUnavailable   = errors.New("unavailable")
	ErrPrecondition  = errors.New("failed precondition")
	ErrResourceLimit = errors.New("resource exhausted")
)

// StatusCodes maps sentinel errors to gRPC codes at an RPC edge and back; each public API
// keeps its own table (the co-processes' shared one is statusTable).
type StatusCodes []StatusCode

// StatusCode is one row of a StatusCodes table.
type StatusCode struct {
	Err  error
	Code codes.Code
}

var statusTable = StatusCodes{
	{Err: ErrInvalid, Code: codes.InvalidArgument},
	{Err: ErrBadConfig, Code: codes.InvalidArgument},
	{Err: ErrNotFound, Code: codes.NotFound},
	{Err: ErrPermission, Code: codes.PermissionDenied},
	{Err: ErrUnavailable, Code: codes.Unavailable},
	{Err: ErrPrecondition, Code: codes.FailedPrecondition},
	{Err: ErrResourceLimit, Code: codes.ResourceExhausted},
}.With(EdgeCodes)

// EdgeCodes are the rows every public API's table ends with: the caller's authentication and
// the RPC's own deadline or cancellation.
var EdgeCodes = StatusCodes{
	{Err: authn.ErrUnauthenticated, Code: codes.Unauthenticated},
	{Err: authn.ErrForbidden, Code: codes.PermissionDenied},
	{Err: authn.ErrNoUser, Code: codes.InvalidArgument},
	{Err: context.DeadlineExceeded, Code: codes.DeadlineExceeded},
	{Err: context.Canceled, Code: codes.Canceled},
}

// With returns a new table: t's rows, then more's (the first matching row wins).
func (t StatusCodes) With(more StatusCodes) StatusCodes {
	out := make(StatusCodes, 0, len(t)+len(more))
	return append(append(out, t...), more...)
}

// ToStatus converts err to a gRPC status error at an RPC edge.
func ToStatus(err error) error { return statusTable.ToStatus(err) }

// FromStatus turns a gRPC error from the host or a co-process back into a sentinel, so
// callers branch with errors.Is.
func FromStatus(err error) error { return statusTable.FromStatus(err) }

// ToStatus converts err to a gRPC status error: an error that already carries a status (from
// the Java host, or wrapped with %w) keeps its code, a sentinel of the table gets its row's
// code, anything else is Internal.
func (t StatusCodes) ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	for _, row := range t {
		if errors.Is(err, row.Err) {
			return status.Error(row.Code, err.Error())
		}
	}
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return status.Error(se.GRPCStatus().Code(), err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

// FromStatus turns a gRPC error back into an error that unwraps to the first sentinel of the
// table with its code and matches (errors.Is) every sentinel sharing that code: the wire
// cannot tell them apart.
func (t StatusCodes) FromStatus(err error) error {
	s, ok := status.FromError(err)
	if !ok || err == nil {
		return err
	}
	for _, row := range t {
		if row.Code == s.Code() {
			return &codedError{sentinel: row.Err, st: s, table: t}
		}
	}
	return err
}

type codedError struct {
	sentinel error
	st       *status.Status
	table    StatusCodes
}

func (e *codedError) Error() string              { return e.st.Message() }
func (e *codedError) Unwrap() error              { return e.sentinel }
func (e *codedError) GRPCStatus() *status.Status { return e.st }

// Is matches every sentinel of the table that shares the status code.
func (e *codedError) Is(target error) bool {
	for _, row := range e.table {
		if row.Err == target {
			return row.Code == e.st.Code()
		}
	}
	return false
}
