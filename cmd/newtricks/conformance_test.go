package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/newtricks/newtricks/conformance/kit"
)

func TestConformanceUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"conformance"}, 2, "name the cluster one way"},
		{[]string{"conformance", "--conf", "a", "--name", "b"}, 2, "name the cluster one way"},
		{[]string{"conformance", "--conf", "/nonexistent-conf-dir"}, 1, "hdfs-site.xml"},
		{[]string{"conformance", "--conf", "x", "--run", "("}, 2, "--run"},
		{[]string{"conformance", "--cluster", "/nonexistent.json"}, 1, "no such file"},
		{[]string{"conformance", "--name", "no-such-cluster-here", "--dir", "/nonexistent-dir"}, 1, "newtricks cluster up --name"},
		{[]string{"conformance", "-h"}, 0, "newtricks conformance --conf DIR"},
	} {
		var out bytes.Buffer
		code := run(context.Background(), c.args, &out, &out)
		if code != c.code || !strings.Contains(out.String(), c.out) {
			t.Errorf("newtricks %v: exit %d, output:\n%s\nwant exit %d and %q", c.args, code, out.String(), c.code, c.out)
		}
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"conformance", "--list"}, &out, &out); code != 0 {
		t.Fatalf("--list: exit %d\n%s", code, out.String())
	}
	if n := strings.Count(out.String(), "\n"); n != len(kit.Cases()) || strings.Count(out.String(), "fault injection") != 2 {
		t.Errorf("--list:\n%s", out.String())
	}
}
