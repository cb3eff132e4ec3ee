// Package fuzzcheck is what the fuzz targets of the public APIs share with the tests that prove
// their checks can fail (TestFuzz...Catches): the part of a *testing.T the checks use, and a
// Recorder that takes a check's first failure instead of failing the test, so that a test can
// run a target's checks against a handler broken on purpose and require them to catch it.
// Only test files import it.
package fuzzcheck

import (
	"context"
	"errors"
	"fmt"

	"github.com/newtricks/newtricks/internal/authn"
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

// Caller is one kind of caller of a public API, and who ActAs must make of the user a request
// names (ok false: the call must fail).
type Caller struct {
	Name       string
	Ctx        context.Context
	ActAs      func(requested string) (user string, ok bool)
	Identified bool // the call carries an identity (simple authentication's counts)
}

// Callers are the kinds of caller every request is run as: none (no interceptor ran), simple
// authentication (the request names the user), Kerberos alice, a delegation token of bob,
// and a Kerberos identity without a user.
func Callers() []Caller {
	bg := context.Background()
	proven := func(user string) func(string) (string, bool) {
		return func(r string) (string, bool) { return user, r == "" || r == user }
	}
	none := func(string) (string, bool) { return "", false }
	return []Caller{
		{"no interceptor", bg, none, false},
		{"simple", authn.NewContext(bg, authn.Identity{Method: authn.MethodSimple}, "10.0.0.1:1", nil),
			func(r string) (string, bool) { return r, r != "" }, true},
		{"kerberos alice", authn.NewContext(bg, authn.Identity{User: "alice", Method: authn.MethodKerberos}, "10.0.0.1:1", nil),
			proven("alice"), true},
		{"token bob", authn.NewContext(bg, authn.Identity{User: "bob", Method: authn.MethodToken}, "10.0.0.1:1", nil),
			proven("bob"), true},
		{"kerberos without a user", authn.NewContext(bg, authn.Identity{Method: authn.MethodKerberos}, "10.0.0.1:1", nil), none, false},
	}
}
