package main

import "golang.org/x/sys/unix"

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
