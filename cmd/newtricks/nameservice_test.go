package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hint and mirror commands name namenode-ext by addresses or by a nameservice, and say
// what is wrong with either before dialing anything.
func TestAPITargetUsage(t *testing.T) {
	dir := t.TempDir()
	site := `<configuration>
<property><name>dfs.nameservices</name><value>prod</value></property>
<property><name>dfs.ha.namenodes.prod</name><value>nn1,nn2</value></property>
<property><name>dfs.namenode.rpc-address.prod.nn1</name><value>127.0.0.1:1</value></property>
<property><name>dfs.namenode.rpc-address.prod.nn2</name><value>127.0.0.2:1</value></property>
<property><name>newtricks.namenode.ext.api.address</name><value>:9</value></property>
</configuration>`
	if err := os.WriteFile(filepath.Join(dir, "hdfs-site.xml"), []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HADOOP_CONF_DIR", "")
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"hint", "list"}, 2, "--addr HOST:PORT[,HOST:PORT] or --nameservice NS [--conf DIR] is required"},
		{[]string{"hint", "list", "--addr", "a:1", "--nameservice", "prod"}, 2, "not both"},
		{[]string{"hint", "list", "--addr", "a:1,b"}, 2, `address "b" is not host:port`},
		{[]string{"hint", "list", "--nameservice", "prod"}, 2, "no conf dir"},
		{[]string{"hint", "list", "--nameservice", "other", "--conf", dir}, 2, `nameservice "other" is not in dfs.nameservices`},
		{[]string{"mirror", "status", "--nameservice", "prod", "--conf", filepath.Join(dir, "nope")}, 2, "hdfs-site.xml"},
		{[]string{"mirror", "status"}, 2, "--nameservice NS [--conf DIR] is required"},
		{[]string{"hint", "-h"}, 0, "newtricks.namenode.ext.api.address.NS.ID"},
		{[]string{"mirror", "-h"}, 0, "--nameservice NS [--conf DIR]"},
	} {
		var out bytes.Buffer
		code := run(context.Background(), c.args, &out, &out)
		if code != c.code || !strings.Contains(out.String(), c.out) {
			t.Errorf("newtricks %v: exit %d, output:\n%s\nwant exit %d and %q", c.args, code, out.String(), c.code, c.out)
		}
	}
	// Resolved: both NameNodes' namenode-ext, as apiclient.Dial takes them.
	for _, tg := range []apiTarget{{nameservice: "prod", conf: dir}, {conf: dir}} {
		got, err := tg.resolve()
		if err != nil || got != "127.0.0.1:9,127.0.0.2:9" {
			t.Errorf("%+v: %q %v", tg, got, err)
		}
	}
	t.Setenv("HADOOP_CONF_DIR", dir)
	tg := apiTarget{nameservice: "prod"}
	if got, err := tg.resolve(); err != nil || got != "127.0.0.1:9,127.0.0.2:9" {
		t.Errorf("from $HADOOP_CONF_DIR: %q %v", got, err)
	}
	var l addrList
	if l.Set("a:1, b:2") != nil || l.Set("c:3") != nil || l.String() != "a:1,b:2,c:3" {
		t.Errorf("repeated --addr: %q", l.String())
	}
}
