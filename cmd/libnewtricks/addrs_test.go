package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// namenode and namenode_ext take one address (the form before nameservices), a
// comma-separated list or a JSON list; nameservice/conf_dir fill them from hdfs-site.xml.
func TestReaderConfigAddresses(t *testing.T) {
	for in, want := range map[string]string{
		`{"namenode": "a:1", "namenode_ext": "b:2"}`:                "a:1|b:2",
		`{"namenode": "a:1,a2:1", "namenode_ext": ["b:2", "b2:2"]}`: "a:1,a2:1|b:2,b2:2",
		`{"namenode": [], "namenode_ext": ""}`:                      "|",
	} {
		var c readerConfig
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := strings.Join(c.NameNode, ",") + "|" + strings.Join(c.NameNodeExt, ","); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{`{"namenode": "a"}`, `{"namenode_ext": ["b:2", 3]}`, `{"namenode": 5}`} {
		var c readerConfig
		if err := json.Unmarshal([]byte(in), &c); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hdfs-site.xml"), []byte(`<configuration>
<property><name>dfs.nameservices</name><value>ns</value></property>
<property><name>dfs.ha.namenodes.ns</name><value>a,b</value></property>
<property><name>dfs.namenode.rpc-address.ns.a</name><value>h1:8020</value></property>
<property><name>dfs.namenode.rpc-address.ns.b</name><value>h2:8020</value></property>
<property><name>newtricks.namenode.ext.api.address.ns.b</name><value>h2:7</value></property>
</configuration>`), 0o644)
	c := readerConfig{ConfDir: dir}
	if err := c.resolveNameService(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.NameNode, ",") != "h1:8020,h2:8020" || strings.Join(c.NameNodeExt, ",") != "h1:9880,h2:7" {
		t.Fatalf("from the nameservice: %v %v", c.NameNode, c.NameNodeExt)
	}
	c = readerConfig{Nameservice: "other", ConfDir: dir}
	if err := c.resolveNameService(); !errors.Is(err, errBadArgument) {
		t.Fatalf("an unknown nameservice: %v", err)
	}
	if _, err := openReaderFromJSON([]byte(`{"user": "u", "nameservice": "ns", "conf_dir": "` + filepath.Join(dir, "none") + `"}`)); !errors.Is(err, errBadArgument) {
		t.Fatalf("a missing conf dir: %v", err)
	}
	if _, err := openReaderFromJSON([]byte(`{"user": "u", "namenode": "a:1"}`)); err == nil || !strings.Contains(err.Error(), "namenode_ext") {
		t.Fatalf("no namenode_ext: %v", err)
	}
}
