package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/internal/progress"
)

// TestStartProgressLines feeds startProgress the steps cluster.Start reports and checks the
// plain lines an admin sees off a terminal.
func TestStartProgressLines(t *testing.T) {
	var b bytes.Buffer
	now := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	rep := progress.New(&b, progress.Options{Mode: progress.Lines, Now: func() time.Time { return now }})
	task := rep.Task("datanodes live", 3, progress.Count)
	step := startProgress(task)
	for _, s := range []cluster.StartStep{
		{Phase: cluster.PhaseQuorum, Want: 3},
		{Phase: cluster.PhaseFormat, Want: 3},
		{Phase: cluster.PhaseLaunch, Want: 3},
		{Phase: cluster.PhaseElect, Want: 3},
		{Phase: cluster.PhaseWait, Want: 3},
		{Phase: cluster.PhaseWait, Want: 3, NameNodeUp: true, SafeMode: "Safe mode is ON."},
		{Phase: cluster.PhaseWait, Want: 3, NameNodeUp: true, Live: 2},
		{Phase: cluster.PhaseWait, Want: 3, NameNodeUp: true, Live: 3},
	} {
		step(s)
	}
	task.DoneAt(3)
	failed := rep.Task("datanodes live", 3, progress.Count)
	startProgress(failed)(cluster.StartStep{Phase: cluster.PhaseWait, Want: 3})
	failed.Fail(errors.New("startup timeout"))
	rep.Close()
	out := b.String()
	for _, s := range []string{
		"datanodes live: 0/3 (0%) - starting ZooKeeper and the JournalNodes\n",
		"datanodes live: 0/3 (0%) - formatting the NameNode\n",
		"datanodes live: 0/3 (0%) - waiting for the first active NameNode\n",
		"datanodes live: 0/3 (0%) - launching the daemons\n",
		"datanodes live: 0/3 (0%) - waiting for the NameNode\n",
		"datanodes live: 0/3 (0%) - NameNode in safe mode\n",
		"datanodes live: 2/3 (66%) - waiting for 1 of 3 DataNodes\n",
		"datanodes live: 3/3 (100%) done\n",
		"datanodes live: 0/3 (0%) failed: startup timeout\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}
