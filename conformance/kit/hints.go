package kit

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
)

const hotspotXAttr = "user.newtricks.hotspot"

// hintFile writes a one-block file of replication 1 under the run's directory, as User.
func hintFile(t T, e *Env, name string) string {
	t.Helper()
	if e.LiveDataNodes < 2 {
		t.Skipf("needs 2 live DataNodes to raise a factor, the cluster has %d", e.LiveDataNodes)
	}
	dir := path.Join(e.Dir, "hot-"+name)
	if err := e.FS.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := path.Join(dir, "f")
	if err := write(e.Ctx, e.FS, p, 1, randomBytes(256<<10), 0o644); err != nil {
		t.Fatalf("write %s as %s: %v", p, e.C.User, err)
	}
	return p
}

func hints(t T, e *Env, user string) *hintclient.Client {
	t.Helper()
	hc, err := hintclient.Dial(e.C.NameNodeAPI, user, dialOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hc.Close() })
	return hc
}

// createHint creates h, retrying while namenode-ext is (re)starting or recovering.
func createHint(ctx context.Context, hc *hintclient.Client, h hintclient.Hint) (*hotspot.Plan, error) {
	deadline := time.Now().Add(90 * time.Second)
	for {
		plan, err := hc.Create(ctx, h)
		if !errors.Is(err, hotspot.ErrUnavailable) || time.Now().After(deadline) {
			return plan, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// raise hints file to factor 2 for window and checks the plan and the factor right after.
func raise(t T, e *Env, hc *hintclient.Client, file string, window time.Duration) *hotspot.Plan {
	t.Helper()
	plan, err := createHint(e.Ctx, hc, hintclient.Hint{Paths: []string{path.Dir(file)}, For: window, Readers: 8, Replication: 2})
	if errors.Is(err, hotspot.ErrPermission) && strings.Contains(err.Error(), "allowed prefix") {
		t.Fatalf("hint on %s: %v: the kit's root %s is outside newtricks.hotspot.allowed-prefixes; give the kit a root inside them", file, err, e.C.Root)
	}
	if err != nil {
		t.Fatalf("hint on %s as %s: %v", file, e.C.User, err)
	}
	if len(plan.Files) != 1 || plan.Files[0].Original != 1 || plan.Files[0].Target != 2 {
		t.Fatalf("plan %+v (skipped %+v): want %s 1 -> 2", plan.Files, plan.Skipped, file)
	}
	if r, err := replication(e.SU, file); err != nil || r != 2 {
		t.Fatalf("%s: factor %d (%v) right after the hint, want 2", file, r, err)
	}
	return plan
}

// restored waits until file is back at factor 1 with no marker left, the hint finished.
func restored(t T, e *Env, hc *hintclient.Client, plan *hotspot.Plan, file string, slack time.Duration) {
	t.Helper()
	eventually(t, time.Until(plan.Deadline)+slack, file+" restored to factor 1", func() error {
		r, err := replication(e.SU, file)
		if err != nil {
			return err
		}
		if r != 1 {
			return fmt.Errorf("factor %d", r)
		}
		return nil
	})
	back := time.Since(plan.Deadline)
	eventually(t, 30*time.Second, "the hint finished and its marker removed", func() error {
		if xa, err := e.SU.ListXAttrs(file); err == nil && xa[hotspotXAttr] != "" {
			return fmt.Errorf("marker %s still on %s: %s", hotspotXAttr, file, xa[hotspotXAttr])
		}
		st, err := hc.Status(e.Ctx, plan.HintID)
		if errors.Is(err, hotspot.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.State != hotspot.StateFinished {
			return fmt.Errorf("hint %s is %s", plan.HintID, st.State)
		}
		return nil
	})
	t.Logf("%s back at factor 1 %v after the hint's deadline", file, back.Round(100*time.Millisecond))
}

// caseHints: a hint raises a file's factor, the replicas get placed, and at the end of the
// window namenode-ext restores the factor and removes its state.
func caseHints(t T, e *Env) {
	file := hintFile(t, e, "raise")
	hc := hints(t, e, e.C.User)
	plan := raise(t, e, hc, file, 20*time.Second)
	wctx, cancel := context.WithTimeout(e.Ctx, 90*time.Second)
	st, err := hc.WaitReady(wctx, plan.HintID, 250*time.Millisecond)
	cancel()
	if err != nil {
		t.Fatalf("hint %s not ready: %v (%+v)", plan.HintID, err, st)
	}
	if st.Files[0].Placed < 2 {
		t.Fatalf("ready with %+v: want 2 replicas placed", st.Files[0])
	}
	t.Logf("ready after %v with %d replicas", st.ReadyAt.Sub(st.Created).Round(10*time.Millisecond), st.Files[0].Placed)
	restored(t, e, hc, plan, file, 60*time.Second)
}

// caseKillNameNodeExt: namenode-ext dies in the middle of a hint; its hook restarts it, the
// new one recovers the hint from HDFS and restores the factor on time.
func caseKillNameNodeExt(t T, e *Env) {
	file := hintFile(t, e, "kill")
	hc := hints(t, e, e.C.User)
	plan := raise(t, e, hc, file, 25*time.Second)
	if err := e.C.Faults.KillCoprocess(e.Ctx, "namenode"); err != nil {
		t.Fatalf("kill namenode-ext: %v", err)
	}
	t.Logf("killed namenode-ext with the hint %s held", plan.HintID)
	restored(t, e, hc, plan, file, 90*time.Second)
}

// hintHot is a hint on p for a minute, factor 2.
func hintHot(p string) hintclient.Hint {
	return hintclient.Hint{Paths: []string{p}, For: time.Minute, Readers: 8, Replication: 2}
}
