package xformgraph

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by Compile or Run wraps one of them; branch with
// errors.Is.
var (
	// ErrInvalidGraph: the spec is malformed (duplicate or missing node ids, cycles,
	// unknown outputs, bad version).
	ErrInvalidGraph = errors.New("xformgraph: invalid graph")
	// ErrUnknownOp: a node names an op that is not registered.
	ErrUnknownOp = errors.New("xformgraph: unknown op")
	// ErrTypeMismatch: a node's input kind is not one its op accepts.
	ErrTypeMismatch = errors.New("xformgraph: type mismatch")
	// ErrBadParam: a parameter is unknown, missing, of the wrong type or out of range.
	ErrBadParam = errors.New("xformgraph: bad parameter")
	// ErrLimit: an input or output exceeds a configured limit (pixels, frames, bytes).
	ErrLimit = errors.New("xformgraph: limit exceeded")
	// ErrDecode: the encoded media is truncated, corrupt, empty or not what it claims.
	ErrDecode = errors.New("xformgraph: cannot decode")
	// ErrUnsupported: a valid but unsupported format, codec or feature.
	ErrUnsupported = errors.New("xformgraph: unsupported")
	// ErrDomain: a determinism domain string is malformed, or bytes come from a domain
	// other than the one expected.
	ErrDomain = errors.New("xformgraph: determinism domain")
	// ErrMissingMember: the graph reads a member ("input:NAME") the sample does not have
	// (a kind of ErrDecode: the sample is not what the graph needs).
	ErrMissingMember = fmt.Errorf("%w: missing member", ErrDecode)
)

// SampleError names the sample and node that failed. It unwraps to the op's error.
type SampleError struct {
	Key  string // Sample.Key
	Node string // node id, empty when the failure is not in a node
	Op   string
	Err  error
}

func (e *SampleError) Error() string {
	if e.Node == "" {
		return fmt.Sprintf("sample %q: %v", e.Key, e.Err)
	}
	return fmt.Sprintf("sample %q: node %q (%s): %v", e.Key, e.Node, e.Op, e.Err)
}

func (e *SampleError) Unwrap() error { return e.Err }
