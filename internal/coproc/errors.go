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

var statusTable = []struct {
	err  error
	code codes.Code
}{
	{ErrInvalid, codes.InvalidArgument},
	{ErrBadConfig, codes.InvalidArgument},
	{ErrNotFound, codes.NotFound},
	{ErrPermission, codes.PermissionDenied},
	{ErrUnavailable, codes.Unavailable},
	{ErrPrecondition, codes.FailedPrecondition},
	{ErrResourceLimit, codes.ResourceExhausted},
	{authn.ErrUnauthenticated, codes.Unauthenticated},
	{authn.ErrForbidden, codes.PermissionDenied},
	{authn.ErrNoUser, codes.InvalidArgument},
	{context.DeadlineExceeded, codes.DeadlineExceeded},
	{context.Canceled, codes.Canceled},
}

// ToStatus converts err to a gRPC status error at an RPC edge.
func ToStatus(err error) error { return toStatus(err) }

func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	for _, row := range statusTable {
		if errors.Is(err, row.err) {
			return status.Error(row.code, err.Error())
		}
	}
	// A host error wrapped with %w keeps its code.
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return status.Error(se.GRPCStatus().Code(), err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

// FromStatus turns a gRPC error from the host or a co-process back into a sentinel, so
// callers branch with errors.Is.
func FromStatus(err error) error {
	s, ok := status.FromError(err)
	if !ok || err == nil {
		return err
	}
	for _, row := range statusTable {
		if row.code == s.Code() {
			return &codedError{sentinel: row.err, st: s}
		}
	}
	return err
}

type codedError struct {
	sentinel error
	st       *status.Status
}

func (e *codedError) Error() string              { return e.st.Message() }
func (e *codedError) Unwrap() error              { return e.sentinel }
func (e *codedError) GRPCStatus() *status.Status { return e.st }
