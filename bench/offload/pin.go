package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pinTree pins every thread of pid and of all its descendants to cpu and returns how many
// threads it moved. Threads and processes created later inherit the affinity of their creator.
func pinTree(pid, cpu int) (int, error) {
	pids := append([]int{pid}, descendants(pid)...)
	moved := 0
	for _, p := range pids {
		n, err := pinProcess(p, cpu)
		moved += n
		if err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// pinProcess pins every thread of pid to cpu and returns how many it moved.
func pinProcess(pid, cpu int) (int, error) {
	var set unix.CPUSet
	set.Set(cpu)
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, t := range tasks {
		tid, err := strconv.Atoi(filepath.Base(t))
		if err != nil {
			continue
		}
		var cur unix.CPUSet
		if unix.SchedGetaffinity(tid, &cur) == nil && cur == set {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return moved, fmt.Errorf("pin thread %d of %d to cpu %d: %w", tid, pid, cpu, err)
		} else if err == nil {
			moved++
		}
	}
	return moved, nil
}

// descendants lists the processes below pid (from /proc/*/stat).
func descendants(pid int) []int {
	parent := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		str := string(b)
		i := strings.LastIndexByte(str, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(str[i+1:])
		if len(f) < 2 {
			continue
		}
		p, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for c, pp := range parent {
			if pp == p {
				out = append(out, c)
				walk(c)
			}
		}
	}
	walk(pid)
	return out
}

// threadCPU is the CPU time of the calling OS thread.
func threadCPU() float64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

// processCPU is this process's user+system CPU time.
func processCPU() float64 {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// contextSwitches is this process's voluntary + involuntary context switches.
func contextSwitches() int64 {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return ru.Nvcsw + ru.Nivcsw
}
