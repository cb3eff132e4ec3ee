package schedule

import "errors"

// Sentinel errors; every error of this package wraps one of them.
var (
	// ErrInvalid: the spec is malformed or exceeds a limit.
	ErrInvalid = errors.New("schedule: invalid spec")
	// ErrEnd: the step is past the end of the schedule.
	ErrEnd = errors.New("schedule: past the last step")
	// ErrUnknownSample: an explicit step names a key that is not in its source's index.
	ErrUnknownSample = errors.New("schedule: unknown sample")
)
