package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procInfo is what the harness reads about a process from /proc.
type procInfo struct {
	pid, ppid, pgid int
	state           byte
	comm            string
}

// readStat parses /proc/<pid>/stat. comm may hold spaces and parentheses, so fields are
// counted from the last ')'.
func readStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procInfo{}, false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procInfo{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 3 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0], comm: string(b[open+1 : end])}, true
}

// cmdline returns the process's argv.
func cmdline(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// pidAlive reports whether pid is a live (not zombie) process whose command line contains
// marker (empty marker: any process).
func pidAlive(pid int, marker string) bool {
	if pid <= 0 {
		return false
	}
	st, ok := readStat(pid)
	if !ok || st.state == 'Z' || st.state == 'X' {
		return false
	}
	return marker == "" || strings.Contains(strings.Join(cmdline(pid), " "), marker)
}

// groupAlive reports whether process group pgid has a live (not zombie) member.
func groupAlive(pgid int) bool {
	for _, p := range allProcs() {
		if p.pgid == pgid && p.state != 'Z' && p.state != 'X' {
			return true
		}
	}
	return false
}

// allProcs lists every process in /proc.
func allProcs() []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procInfo
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// descendants returns every live descendant of root, children before grandchildren.
func descendants(root int) []procInfo {
	procs := allProcs()
	kids := map[int][]procInfo{}
	for _, p := range procs {
		if p.state != 'Z' {
			kids[p.ppid] = append(kids[p.ppid], p)
		}
	}
	var out []procInfo
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			out = append(out, k)
			queue = append(queue, k.pid)
		}
	}
	return out
}

// matchesExe reports whether process p runs the executable named match: the base name of
// /proc/<pid>/exe or of argv[0], or its comm (which the kernel cuts at 15 bytes). An empty
// match matches everything.
func matchesExe(p procInfo, match string) bool {
	if match == "" {
		return true
	}
	if exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(p.pid), "exe")); err == nil {
		if filepath.Base(strings.TrimSuffix(exe, " (deleted)")) == match {
			return true
		}
	}
	if argv := cmdline(p.pid); len(argv) > 0 && filepath.Base(argv[0]) == match {
		return true
	}
	return p.comm == match || (len(match) > 15 && p.comm == match[:15])
}

// ProcessesMentioning returns the pids of live processes whose command line contains s,
// excluding the calling process. Tests use it with a cluster's base dir to prove that no
// daemon outlived Stop.
func ProcessesMentioning(s string) []int {
	self := os.Getpid()
	var out []int
	for _, p := range allProcs() {
		if p.pid == self || p.state == 'Z' {
			continue
		}
		if strings.Contains(strings.Join(cmdline(p.pid), " "), s) {
			out = append(out, p.pid)
		}
	}
	return out
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// DaemonUsage is what one daemon's JVM has used so far, from /proc.
type DaemonUsage struct {
	Daemon Daemon
	PID    int
	// CPU is user plus system time since the JVM started.
	CPU time.Duration
	// RSS is the resident set size now, in bytes.
	RSS int64
}

// Usage reports the CPU time and resident memory of every running daemon's JVM (not its
// co-processes), in start-up order: what a cluster costs a shared machine.
func (c *Cluster) Usage() []DaemonUsage {
	c.mu.Lock()
	ds, ps := c.daemons()
	c.mu.Unlock()
	var out []DaemonUsage
	for i, p := range ps {
		if !p.running() {
			continue
		}
		u := DaemonUsage{Daemon: ds[i], PID: p.pid}
		if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid), "stat")); err == nil {
			if end := bytes.LastIndexByte(b, ')'); end > 0 {
				f := strings.Fields(string(b[end+1:]))
				if len(f) > 22 {
					ut, _ := strconv.ParseInt(f[11], 10, 64)
					st, _ := strconv.ParseInt(f[12], 10, 64)
					u.CPU = time.Duration(ut+st) * time.Second / clockTicks
					pages, _ := strconv.ParseInt(f[21], 10, 64)
					u.RSS = pages * int64(os.Getpagesize())
				}
			}
		}
		out = append(out, u)
	}
	return out
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times (100 on every Linux the
// harness runs on).
const clockTicks = 100
