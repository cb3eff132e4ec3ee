package cluster

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// PinThreads sets the CPU affinity of every thread of pid to cpu and returns how many threads
// it moved (those already there are left alone). Threads created later inherit the affinity of
// their creator. A process or thread that exits meanwhile is skipped.
func PinThreads(pid, cpu int) (int, error) {
	var set unix.CPUSet
	set.Set(cpu)
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, nil // gone
	}
	moved := 0
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		var cur unix.CPUSet
		if unix.SchedGetaffinity(tid, &cur) == nil && cur == set {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err == nil {
			moved++
		} else if !errors.Is(err, unix.ESRCH) {
			return moved, fmt.Errorf("pin thread %d of %d to cpu %d: %w", tid, pid, cpu, err)
		}
	}
	return moved, nil
}

// PinTree pins every thread of pid and of all its live descendants to cpu (PinThreads) and
// returns how many threads it moved.
func PinTree(pid, cpu int) (int, error) {
	pids := []int{pid}
	for _, d := range descendants(pid) {
		pids = append(pids, d.pid)
	}
	moved := 0
	for _, p := range pids {
		n, err := PinThreads(p, cpu)
		moved += n
		if err != nil {
			return moved, err
		}
	}
	return moved, nil
}
