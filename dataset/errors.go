package dataset

import "errors"

// Sentinel errors; every error of this package wraps one of them.
var (
	// ErrInvalid: an index that is malformed, or a dataset that cannot be indexed (duplicate
	// keys, no samples, a corrupt tar).
	ErrInvalid = errors.New("dataset: invalid")
	// ErrStale: a file changed since it was indexed.
	ErrStale = errors.New("dataset: index is stale")
	// ErrNotFound: no such key or file.
	ErrNotFound = errors.New("dataset: not found")
)
