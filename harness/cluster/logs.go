package cluster

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Logs maps every daemon to its log file (stdout and stderr of each run, appended).
func (c *Cluster) Logs() map[Daemon]string {
	m := map[Daemon]string{}
	for _, d := range c.Daemons() {
		m[d] = c.LogPath(d)
	}
	return m
}

// DumpLogs writes the last tailLines lines of every daemon's log to w, NameNodes first,
// then DataNodes, then (HA) ZKFCs, JournalNodes, ZooKeeper and DFSHAAdmin's runs.
func (c *Cluster) DumpLogs(w io.Writer, tailLines int) {
	var first, last []string
	for _, d := range c.Daemons() {
		switch d.role() {
		case "namenode", "datanode":
			first = append(first, c.LogPath(d))
		default:
			last = append(last, c.LogPath(d))
		}
	}
	if c.cfg.HA != nil {
		last = append(last, filepath.Join(c.cfg.BaseDir, "client", "haadmin.log"))
	}
	for _, path := range append(first, last...) {
		d := strings.TrimSuffix(filepath.Base(path), ".log")
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(w, "----- %s %s: %v\n", c.cfg.Name, d, err)
			continue
		}
		fmt.Fprintf(w, "----- %s %s (last %d lines of %s)\n%s\n", c.cfg.Name, d, tailLines, path, tail(string(b), tailLines))
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
