package cluster

import (
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestPinTreeReachesGrandchildren(t *testing.T) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	cpu := -1
	for i := 0; i < 1024 && cpu < 0; i++ {
		if all.IsSet(i) {
			cpu = i
		}
	}
	// A shell whose child (sleep) is the grandchild of this test.
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var kids []procInfo
	for deadline := time.Now().Add(5 * time.Second); len(kids) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		kids = descendants(cmd.Process.Pid)
	}
	if len(kids) == 0 {
		t.Fatal("the shell's sleep never appeared")
	}
	if _, err := PinTree(cmd.Process.Pid, cpu); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{cmd.Process.Pid, kids[0].pid} {
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(pid, &got); err != nil {
			t.Fatal(err)
		}
		if got.Count() != 1 || !got.IsSet(cpu) {
			t.Fatalf("pid %d: affinity %v, want only CPU %d", pid, got, cpu)
		}
	}
	if n, err := PinThreads(cmd.Process.Pid, cpu); err != nil || n != 0 {
		t.Fatalf("pinning again moved %d threads (%v); want 0", n, err)
	}
}
