package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunUsage(t *testing.T) {
	cases := []struct {
		args []string
		code int
		out  string // substring of stdout+stderr
	}{
		{nil, 0, "commands:"},
		{[]string{"help"}, 0, "cluster"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"cluster"}, 2, "missing subcommand"},
		{[]string{"cluster", "sideways"}, 2, `unknown subcommand "sideways"`},
		{[]string{"cluster", "-h"}, 0, "newtricks cluster up"},
		{[]string{"cluster", "up", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"cluster", "up", "--datanodes", "-1"}, 2, "--datanodes -1"},
		{[]string{"cluster", "up", "--conf", "novalue"}, 2, "want key=value"},
		{[]string{"cluster", "up", "--nn-ext", "x"}, 2, "need --jar"},
		{[]string{"cluster", "up", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"cluster", "up", "--ha-manual"}, 2, "need --ha"},
		{[]string{"cluster", "up", "--nameservice", "x"}, 2, "need --ha"},
		{[]string{"cluster", "up", "--ha", "--nameservice", "Bad.Name"}, 2, `nameservice "Bad.Name"`},
		{[]string{"cluster", "status", "-h"}, 0, "newtricks cluster status"},
		{[]string{"doctor"}, 2, "--conf is required"},
		{[]string{"doctor", "--conf", "/nonexistent-conf-dir"}, 1, "hdfs-site.xml"},
		{[]string{"doctor", "--conf", "x", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"doctor", "-h"}, 0, "newtricks doctor --conf DIR"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		code := run(context.Background(), c.args, &out, &out)
		if code != c.code || !strings.Contains(out.String(), c.out) {
			t.Errorf("newtricks %v: exit %d, output:\n%s\nwant exit %d and %q", c.args, code, out.String(), c.code, c.out)
		}
	}
}

func TestStatusAndDownWithoutCluster(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	var out bytes.Buffer
	if code := run(context.Background(), []string{"cluster", "status", "--name", "x", "--dir", dir}, &out, &out); code != 1 || !strings.Contains(out.String(), "not running") {
		t.Errorf("status: exit %d: %s", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"cluster", "down", "--name", "x", "--dir", dir}, &out, &out); code != 0 || !strings.Contains(out.String(), "not running") {
		t.Errorf("down: exit %d: %s", code, out.String())
	}
}

func TestKVFlags(t *testing.T) {
	f := kvFlags{}
	for _, s := range []string{"a=1", "b=x=y", "c="} {
		if err := f.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if f["a"] != "1" || f["b"] != "x=y" || f["c"] != "" {
		t.Errorf("%v", f)
	}
	if err := f.Set("=v"); err == nil {
		t.Error("empty key accepted")
	}
}
