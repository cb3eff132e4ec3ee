package cluster

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Logs maps every daemon to its log file (stdout and stderr of each run, appended).
func (c *Cluster) Logs() map[Daemon]string {
	c.mu.Lock()
	n := len(c.dnPorts)
	c.mu.Unlock()
	m := map[Daemon]string{NameNode: c.LogPath(NameNode)}
	for i := range n {
		m[DataNode(i)] = c.LogPath(DataNode(i))
	}
	return m
}

// DumpLogs writes the last tailLines lines of every daemon's log to w, NameNode first.
func (c *Cluster) DumpLogs(w io.Writer, tailLines int) {
	c.mu.Lock()
	n := len(c.dnPorts)
	c.mu.Unlock()
	ds := []Daemon{NameNode}
	for i := range n {
		ds = append(ds, DataNode(i))
	}
	for _, d := range ds {
		path := c.LogPath(d)
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
