package doctor

import (
	"context"
	"path/filepath"
	"testing"
)

// TestRemote: from another host (Remote), the binaries, the socket dir and the jar of the
// daemons' host are not checked (a missing one is not this host's problem), and one finding
// says so; the configuration still is.
func TestRemote(t *testing.T) {
	f := newFixture(t)
	f.hdfs[keyNNBinary] = "/nonexistent/namenode-ext"
	f.hdfs[keySocketDir] = "/nonexistent/sock"
	writeSite(t, f.dir, "core-site.xml", f.core)
	writeSite(t, f.dir, "hdfs-site.xml", f.hdfs)
	r, err := Run(context.Background(), Options{ConfDir: f.dir, Offline: true, Remote: true, Classpath: []string{filepath.Join(f.dir, "*")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, check := range []string{"namenode.binary", "datanode.binary", "socket.dir", "hooks.jar"} {
		if n := len(r.Find(check)); n != 0 {
			t.Errorf("%s checked from another host: %+v", check, r.Find(check))
		}
	}
	if status(r, "host") != Warn || status(r, "namenode.plugin") != Pass {
		t.Errorf("remote report: host %q, namenode.plugin %q", status(r, "host"), status(r, "namenode.plugin"))
	}
	if r.Fail != 0 {
		t.Errorf("%d failures from another host with a good configuration: %+v", r.Fail, r.Findings)
	}
}
