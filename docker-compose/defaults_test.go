// Package compose holds the docker-compose topology; this test keeps its defaults as secure as
// the ones BUILDING.md gives admins (issue 7): APIs bound to the daemon's own address, metrics
// on loopback, and, since the compose cluster runs simple authentication, ports published on
// the host's loopback only.
package compose

import (
	"encoding/xml"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func site(t *testing.T, p string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Props []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	m := map[string]string{}
	for _, p := range c.Props {
		m[p.Name] = p.Value
	}
	return m
}

func TestSecureDefaults(t *testing.T) {
	for _, role := range []string{"namenode", "datanode"} {
		m := site(t, filepath.Join("conf", role, "hdfs-site.xml"))
		api, metrics := m["newtricks."+role+".ext.api.address"], m["newtricks."+role+".ext.metrics.address"]
		if h, _, err := net.SplitHostPort(api); err != nil || h != "" {
			t.Errorf("%s: api.address %q: want \":port\" (binds to the daemon's own address)", role, api)
		}
		if h, _, err := net.SplitHostPort(metrics); err != nil || h != "127.0.0.1" {
			t.Errorf("%s: metrics.address %q: want 127.0.0.1:port", role, metrics)
		}
	}
	if nn := site(t, filepath.Join("conf", "namenode", "hdfs-site.xml")); nn["dfs.namenode.rpc-address"] == "" {
		t.Error("namenode: dfs.namenode.rpc-address unset: namenode-ext's API would bind to loopback inside the container")
	}
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	port := regexp.MustCompile(`^\s*-\s*"([^"]+)"`)
	inPorts, n := false, 0
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "ports:":
			inPorts = true
			continue
		case inPorts && !strings.HasPrefix(trimmed, "-"):
			inPorts = false
		}
		if m := port.FindStringSubmatch(line); inPorts && m != nil {
			n++
			if !strings.HasPrefix(m[1], "127.0.0.1:") {
				t.Errorf("compose.yaml publishes %q beyond the host's loopback (simple authentication)", m[1])
			}
		}
	}
	if n == 0 {
		t.Error("compose.yaml: no published ports found (parser out of date?)")
	}
}
