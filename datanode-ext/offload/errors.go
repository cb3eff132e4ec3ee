package offload

import (
	"errors"

	"google.golang.org/grpc/codes"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/xformgraph"
)

// Sentinel errors of the session calls: the co-process's, so that coproc.ToStatus maps them to
// gRPC codes at the edge.
var (
	ErrInvalid      = coproc.ErrInvalid
	ErrPermission   = coproc.ErrPermission
	ErrNotFound     = coproc.ErrNotFound
	ErrPrecondition = coproc.ErrPrecondition
	ErrExhausted    = coproc.ErrResourceLimit
	ErrUnavailable  = coproc.ErrUnavailable
)

// sampleCode maps a per-sample failure to the google.rpc.Code carried in OffloadSample.
func sampleCode(err error) codes.Code {
	switch {
	case errors.Is(err, ErrPermission):
		return codes.PermissionDenied
	case errors.Is(err, xformgraph.ErrLimit):
		return codes.ResourceExhausted
	case errors.Is(err, xformgraph.ErrUnsupported):
		return codes.Unimplemented
	case errors.Is(err, xformgraph.ErrDecode), errors.Is(err, xformgraph.ErrTypeMismatch):
		return codes.InvalidArgument
	case errors.Is(err, ErrUnavailable):
		return codes.Unavailable
	}
	return codes.Internal
}
