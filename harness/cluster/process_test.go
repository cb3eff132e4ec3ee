package cluster

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestProcessGroupKill checks, without Java, the machinery every daemon relies on: a
// process started by the spawner runs in its own group, its grandchildren are found by
// executable name, and stopping it leaves nothing of the group alive.
func TestProcessGroupKill(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep(1)")
	}
	dir := t.TempDir()
	marker := dir + string(filepath.Separator)
	sp := newSpawner()
	defer sp.close()
	// The shell ignores SIGTERM (as a stuck JVM might), so stop must escalate to SIGKILL,
	// and its two sleeps are grandchildren-to-be of the harness, like co-processes.
	cmd := exec.Command("sh", "-c", "trap '' TERM; sleep 300 & sleep 301 & wait", marker+"x")
	p, err := startProcess(sp, "fake", cmd, filepath.Join(dir, "fake.log"), "")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var kids []procInfo
	for time.Now().Before(deadline) {
		kids = nil
		for _, k := range descendants(p.pid) {
			if matchesExe(k, "sleep") {
				kids = append(kids, k)
			}
		}
		if len(kids) == 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(kids) != 2 {
		t.Fatalf("found %d sleep children of %d, want 2", len(kids), p.pid)
	}
	for _, k := range kids {
		if k.pgid != p.pid {
			t.Errorf("child %d in group %d, want %d", k.pid, k.pgid, p.pid)
		}
	}
	if !p.running() {
		t.Fatal("process not running")
	}
	began := time.Now()
	p.stop(300 * time.Millisecond)
	if p.running() {
		t.Fatal("still running after stop")
	}
	for _, k := range kids {
		if pidAlive(k.pid, "") {
			t.Errorf("child %d survived stop", k.pid)
		}
	}
	if left := ProcessesMentioning(marker); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
	t.Logf("stop with SIGKILL escalation took %v", time.Since(began))
}

func TestMatchesExe(t *testing.T) {
	self := procInfo{pid: 1, comm: "namenode-ext-lo"} // comm is cut at 15 bytes
	if !matchesExe(self, "namenode-ext-long-name") {
		t.Error("truncated comm should match the full name")
	}
	if matchesExe(procInfo{pid: -1, comm: "java"}, "namenode-ext") {
		t.Error("java matched namenode-ext")
	}
	if !matchesExe(procInfo{pid: -1, comm: "x"}, "") {
		t.Error("empty match should match everything")
	}
}
