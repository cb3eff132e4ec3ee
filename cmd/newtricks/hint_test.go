package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/newtricks/newtricks/internal/progress"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
)

// TestWaitHintProgress: the replicas placed rise from 0 to the plan's total over three polls,
// then the hint is ready; the lines show each step and end with "done".
func TestWaitHintProgress(t *testing.T) {
	plan := &hotspot.Plan{HintID: "h1", Files: []hotspot.FilePlan{
		{Path: "/ckpt/a", Original: 3, Target: 6},
		{Path: "/ckpt/b", Original: 3, Target: 5},
		{Path: "/ckpt/c", Original: 3, Target: 3}, // nothing to place
	}}
	created := time.Now()
	polls := []*hotspot.HintStatus{
		{ID: "h1", State: hotspot.StatePreparing, Files: []hotspot.FileProgress{{Original: 3, Target: 6, Placed: 3}, {Original: 3, Target: 5, Placed: 3}, {Original: 3, Target: 3, Placed: 3, Ready: true}}},
		{ID: "h1", State: hotspot.StatePreparing, Files: []hotspot.FileProgress{{Original: 3, Target: 6, Placed: 5}, {Original: 3, Target: 5, Placed: 5, Ready: true}, {Original: 3, Target: 3, Placed: 3, Ready: true}}},
		{ID: "h1", State: hotspot.StateReady, Created: created, ReadyAt: created.Add(time.Second), Files: []hotspot.FileProgress{{Original: 3, Target: 6, Placed: 1 << 30, Ready: true}, {Original: 3, Target: 5, Placed: 5, Ready: true}, {Original: 3, Target: 3, Placed: 3, Ready: true}}},
	}
	var b bytes.Buffer
	rep := progress.New(&b, progress.Options{Mode: progress.Lines})
	i := 0
	st, err := waitHint(context.Background(), rep, plan, func(context.Context) (*hotspot.HintStatus, error) {
		s := polls[min(i, len(polls)-1)]
		i++
		return s, nil
	}, time.Millisecond)
	rep.Close()
	if err != nil || !st.Ready() {
		t.Fatalf("waitHint: %+v %v", st, err)
	}
	out := b.String()
	for _, s := range []string{
		"replicas placed: 0/5 (0%) - 1 of 3 files ready (PREPARING)\n",
		"replicas placed: 4/5 (80%) - 2 of 3 files ready (PREPARING)\n",
		"replicas placed: 5/5 (100%) done\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}

func TestWaitHintEndsBeforeReady(t *testing.T) {
	plan := &hotspot.Plan{HintID: "h2", Files: []hotspot.FilePlan{{Path: "/ckpt/a", Original: 3, Target: 6}}}
	var b bytes.Buffer
	rep := progress.New(&b, progress.Options{JSON: true})
	_, err := waitHint(context.Background(), rep, plan, func(context.Context) (*hotspot.HintStatus, error) {
		return &hotspot.HintStatus{ID: "h2", State: hotspot.StateCancelled, Files: []hotspot.FileProgress{{Original: 3, Target: 6, Placed: 4}}}, nil
	}, time.Millisecond)
	rep.Close()
	if !errors.Is(err, hotspot.ErrFinished) {
		t.Fatalf("cancelled hint: %v", err)
	}
	if !strings.Contains(b.String(), `"state":"failed"`) || !strings.Contains(b.String(), "is CANCELLED") {
		t.Errorf("JSON progress lacks the failure:\n%s", b.String())
	}
}
