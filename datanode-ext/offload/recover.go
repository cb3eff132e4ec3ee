package offload

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// ErrInternal is wrapped by a failure recovered from a panic: that sample (INTERNAL in its
// answer) or that call (INTERNAL) fails, the process and every other session go on.
var ErrInternal = errors.New("internal error")

// safely runs f and turns a panic into an error wrapping ErrInternal; the stack goes to the
// node's log (never to the caller), and Counters.Panics counts it. Every goroutine that works
// on request data runs it: the transform workers, the raw reads of GetStep, the open of a
// session and the preparation of its steps. It may run with Manager.mu held (it never takes
// it).
func (m *Manager) safely(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			m.panics.Add(1) // not under m.mu: the panicking code may hold it
			m.log.Error("recovered from a panic: the sample or session fails, the process goes on",
				"in", what, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("%w: %s failed: %v", ErrInternal, what, p)
		}
	}()
	return f()
}
