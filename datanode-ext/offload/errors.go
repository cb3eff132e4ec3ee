package offload

import (
	"errors"

	"google.golang.org/grpc/codes"

	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/xformgraph"
)

// Sentinel errors of the offload calls. They are the co-process's own (internal/coproc), not
// new values: errors from the DataNode's host service and from peers come back through
// FromStatus as those sentinels, and the per-sample codes below must recognise them.
var (
	ErrInvalid      = coproc.ErrInvalid
	ErrPermission   = coproc.ErrPermission
	ErrNotFound     = coproc.ErrNotFound
	ErrPrecondition = coproc.ErrPrecondition
	ErrExhausted    = coproc.ErrResourceLimit
	ErrUnavailable  = coproc.ErrUnavailable
)

// statusTable maps the call errors to gRPC codes at the edge (server.go) and the host's and
// peers' codes back (clients.go). An error that already carries a status keeps its code.
var statusTable = coproc.StatusCodes{
	{Err: ErrInvalid, Code: codes.InvalidArgument},
	{Err: dataset.ErrInvalid, Code: codes.InvalidArgument}, // malformed block lists, indexes
	{Err: dataset.ErrStale, Code: codes.FailedPrecondition},
	{Err: ErrInternal, Code: codes.Internal},
	{Err: ErrNotFound, Code: codes.NotFound},
	{Err: ErrPermission, Code: codes.PermissionDenied},
	{Err: ErrUnavailable, Code: codes.Unavailable},
	{Err: ErrPrecondition, Code: codes.FailedPrecondition},
	{Err: ErrExhausted, Code: codes.ResourceExhausted},
}.With(coproc.EdgeCodes)

// toStatus converts an error of a call to a gRPC status error.
func toStatus(err error) error { return statusTable.ToStatus(err) }

// fromStatus turns a gRPC error of the host service or a peer back into a wrapped sentinel.
func fromStatus(err error) error { return statusTable.FromStatus(err) }

// sampleTable gives the google.rpc.Code carried in OffloadSample for a per-sample failure: the
// first row the error matches (errors.Is), else Internal. Unlike statusTable it looks at the
// sentinels only: a sample's error is its own, never the call's.
var sampleTable = coproc.StatusCodes{
	{Err: ErrInternal, Code: codes.Internal},
	{Err: ErrPermission, Code: codes.PermissionDenied},
	{Err: xformgraph.ErrLimit, Code: codes.ResourceExhausted},
	{Err: ErrExhausted, Code: codes.ResourceExhausted},
	{Err: dataset.ErrInvalid, Code: codes.InvalidArgument},
	{Err: xformgraph.ErrUnsupported, Code: codes.Unimplemented},
	{Err: xformgraph.ErrDecode, Code: codes.InvalidArgument},
	{Err: xformgraph.ErrTypeMismatch, Code: codes.InvalidArgument},
	{Err: ErrUnavailable, Code: codes.Unavailable},
}

// sampleCode maps a per-sample failure to its code (sampleTable).
func sampleCode(err error) codes.Code {
	for _, row := range sampleTable {
		if errors.Is(err, row.Err) {
			return row.Code
		}
	}
	return codes.Internal
}

// SampleCodes are the codes a per-sample error can carry (Counters.ErrorsByCode).
var SampleCodes = []codes.Code{codes.InvalidArgument, codes.PermissionDenied, codes.ResourceExhausted,
	codes.Unimplemented, codes.Unavailable, codes.Internal}
