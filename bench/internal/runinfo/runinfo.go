// Package runinfo is what a benchmark's BENCH line says about the run itself: the commit it ran
// on (and whether the work tree had changes), and the machine's load average when it started
// and when it ended. A figure without these cannot be told apart from one measured on other
// code or on a busy machine (issue 24 item 7).
package runinfo

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Run is one benchmark run's provenance, taken by Start.
type Run struct {
	Commit    string // git rev-parse --short HEAD, "unknown" outside a git work tree
	Dirty     bool   // git status --porcelain listed a change (untracked files included)
	LoadStart string // the 1, 5 and 15 minute load averages at Start, joined by "/"
}

// Start records the commit and the load now.
func Start() *Run {
	r := &Run{Commit: "unknown", LoadStart: Load()}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		r.Commit = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain").Output(); err == nil {
			r.Dirty = len(strings.TrimSpace(string(st))) > 0
		}
	}
	return r
}

// Fields are the BENCH line's provenance fields, with the load at the time of the call as
// load_end: "commit=<short> dirty=<bool> load_start=<1/5/15> load_end=<1/5/15>".
func (r *Run) Fields() string {
	return fmt.Sprintf("commit=%s dirty=%v load_start=%s load_end=%s", r.Commit, r.Dirty, r.LoadStart, Load())
}

// Load is /proc/loadavg's 1, 5 and 15 minute load averages joined by "/" (no spaces, so it is
// one BENCH field), or "unknown".
func Load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return parseLoad(string(b))
}

func parseLoad(s string) string {
	f := strings.Fields(s)
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], "/")
}
