package kit

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// T is what a case sees of its engine: the subset of *testing.T the cases use. Both engines
// implement it: go test (Run wraps *testing.T) and the standalone runner of `newtricks
// conformance` (RunStandalone), so one body of cases runs under either.
type T interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	// Fatalf and Skipf end the case (they do not return).
	Fatalf(format string, args ...any)
	Fatal(args ...any)
	Skipf(format string, args ...any)
	Failed() bool
	// Cleanup registers f to run when the case ends, last registered first.
	Cleanup(f func())
	// Run runs f as a sub-case named name and reports whether it passed (or was skipped).
	Run(name string, f func(T)) bool
}

// goT adapts *testing.T.
type goT struct{ *testing.T }

func (t goT) Run(name string, f func(T)) bool {
	return t.T.Run(name, func(tt *testing.T) { f(goT{tt}) })
}

// Outcome of one case in a standalone run.
type Outcome string

const (
	Passed  Outcome = "pass"
	Failed  Outcome = "fail"
	Skipped Outcome = "skip"
)

// CaseResult is one case (or sub-case) of a standalone run.
type CaseResult struct {
	Name     string        `json:"name"`
	Outcome  Outcome       `json:"outcome"`
	Duration time.Duration `json:"duration_ns"`
	// Reason is the skip reason or the first failure.
	Reason string   `json:"reason,omitempty"`
	Log    []string `json:"log,omitempty"`
}

// Result is a whole standalone run.
type Result struct {
	Cases []CaseResult `json:"cases"`
	Pass  int          `json:"pass"`
	Fail  int          `json:"fail"`
	Skip  int          `json:"skip"`
}

// OK reports whether nothing failed.
func (r *Result) OK() bool { return r.Fail == 0 }

// standalone runs cases outside go test: each case in its own goroutine (Fatalf and Skipf end
// it with runtime.Goexit, as the testing package does), cleanups in reverse order, results
// printed as they finish.
type standalone struct {
	name   string
	out    io.Writer
	filter *regexp.Regexp
	res    *Result
	mu     *sync.Mutex
	// top: the run's top level, whose result the caller records (its sub-cases are the cases).
	top bool

	cmu      sync.Mutex
	failed   bool
	skipped  bool
	reason   string
	log      []string
	cleanups []func()
}

func (s *standalone) Helper()      {}
func (s *standalone) Name() string { return s.name }

func (s *standalone) logLine(line string) {
	s.cmu.Lock()
	s.log = append(s.log, line)
	s.cmu.Unlock()
	s.mu.Lock()
	fmt.Fprintf(s.out, "    %s: %s\n", s.name, strings.ReplaceAll(line, "\n", "\n        "))
	s.mu.Unlock()
}

func (s *standalone) Logf(format string, args ...any) { s.logLine(fmt.Sprintf(format, args...)) }

func (s *standalone) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.cmu.Lock()
	s.failed = true
	if s.reason == "" {
		s.reason = msg
	}
	s.cmu.Unlock()
	s.logLine("FAIL: " + msg)
}

func (s *standalone) Fatalf(format string, args ...any) {
	s.Errorf(format, args...)
	runtime.Goexit()
}

func (s *standalone) Fatal(args ...any) { s.Fatalf("%s", fmt.Sprint(args...)) }

func (s *standalone) Skipf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.cmu.Lock()
	s.skipped = true
	s.reason = msg
	s.cmu.Unlock()
	runtime.Goexit()
}

func (s *standalone) Failed() bool {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	return s.failed
}

func (s *standalone) Cleanup(f func()) {
	s.cmu.Lock()
	s.cleanups = append(s.cleanups, f)
	s.cmu.Unlock()
}

func (s *standalone) Run(name string, f func(T)) bool {
	full := s.name + "/" + strings.ReplaceAll(name, " ", "_")
	if s.filter != nil && !s.filter.MatchString(full) && !s.filter.MatchString(s.name) {
		return true
	}
	sub := &standalone{name: full, out: s.out, filter: s.filter, res: s.res, mu: s.mu}
	r := sub.run(f)
	if r.Outcome == Failed {
		s.cmu.Lock()
		s.failed = true
		if s.reason == "" {
			s.reason = full + " failed"
		}
		s.cmu.Unlock()
	}
	return r.Outcome != Failed
}

// run runs f as this case and records its result.
func (s *standalone) run(f func(T)) CaseResult {
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			for i := len(s.cleanups) - 1; i >= 0; i-- {
				s.runCleanup(s.cleanups[i])
			}
		}()
		defer func() {
			if p := recover(); p != nil {
				s.cmu.Lock()
				s.failed, s.reason = true, fmt.Sprintf("panic: %v", p)
				s.cmu.Unlock()
			}
		}()
		f(s)
	}()
	<-done
	r := CaseResult{Name: s.name, Duration: time.Since(start), Reason: s.reason, Log: s.log, Outcome: Passed}
	switch {
	case s.failed:
		r.Outcome = Failed
	case s.skipped:
		r.Outcome = Skipped
	}
	if s.top {
		return r
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.res.Cases = append(s.res.Cases, r)
	switch r.Outcome {
	case Passed:
		s.res.Pass++
		fmt.Fprintf(s.out, "--- PASS: %s (%.1fs)\n", s.name, r.Duration.Seconds())
	case Failed:
		s.res.Fail++
		fmt.Fprintf(s.out, "--- FAIL: %s (%.1fs): %s\n", s.name, r.Duration.Seconds(), r.Reason)
	case Skipped:
		s.res.Skip++
		fmt.Fprintf(s.out, "--- SKIP: %s: %s\n", s.name, r.Reason)
	}
	return r
}

// runCleanup runs one cleanup; a Fatalf in it ends only that cleanup.
func (s *standalone) runCleanup(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				s.Errorf("cleanup panicked: %v", p)
			}
		}()
		f()
	}()
	<-done
}
