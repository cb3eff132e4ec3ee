// Package fuzzcheck is what the fuzz targets of the public APIs share with the tests that prove
// their checks can fail (TestFuzz...Catches): the part of a *testing.T the checks use, and a
// Recorder that takes a check's first failure instead of failing the test, so that a test can
// run a target's checks against a handler broken on purpose and require them to catch it.
// Only test files import it.
package fuzzcheck

import (
	"errors"
	"fmt"
)

// T is what a fuzz target's checks need of a *testing.T; a *Recorder is one too.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
}

// errRecorded stops a check at the first failure a Recorder records.
var errRecorded = errors.New("recorded")

// Recorder is a T that records the first failure instead of failing the test.
type Recorder struct{ failure string }

// Helper implements T.
func (r *Recorder) Helper() {}

// Fatalf records the failure and stops the check (Run recovers it).
func (r *Recorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	panic(errRecorded)
}

// Run runs one check, returning the failure it recorded ("" for none). Any other panic goes on.
func (r *Recorder) Run(check func()) (failure string) {
	defer func() {
		if p := recover(); p != nil && p != errRecorded {
			panic(p)
		}
		failure = r.failure
	}()
	check()
	return ""
}
