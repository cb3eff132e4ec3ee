package siteconf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func conf(t *testing.T, hdfs map[string]string) *Conf {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("<configuration>\n")
	for k, v := range hdfs {
		b.WriteString("<property><name>" + k + "</name><value>" + v + "</value></property>\n")
	}
	b.WriteString("</configuration>\n")
	if err := os.WriteFile(filepath.Join(dir, "hdfs-site.xml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ha(extra map[string]string) map[string]string {
	m := map[string]string{
		"fs.defaultFS":                      "hdfs://prod",
		"dfs.nameservices":                  "prod, other",
		"dfs.ha.namenodes.prod":             "nn1,nn2",
		"dfs.namenode.rpc-address.prod.nn1": "nn-a.example.com:8020",
		"dfs.namenode.rpc-address.prod.nn2": "nn-b.example.com:8020",
		"dfs.ha.namenodes.other":            "x",
		"dfs.namenode.rpc-address.other.x":  "0.0.0.0:8020",
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func TestNameService(t *testing.T) {
	// The fallback: each NameNode's host, the port of newtricks.namenode.ext.api.address
	// (whose host, a NameNode's own, is not used).
	n, err := conf(t, ha(map[string]string{KeyAPI: "nn-a.example.com:7000"})).NameService("")
	if err != nil {
		t.Fatal(err)
	}
	if n.Name != "prod" || strings.Join(n.RPCs(), " ") != "nn-a.example.com:8020 nn-b.example.com:8020" ||
		strings.Join(n.APIs(), " ") != "nn-a.example.com:7000 nn-b.example.com:7000" || n.NameNodes[1].ID != "nn2" {
		t.Fatalf("%+v", n)
	}
	// Per-NameNode keys win; a host-less one gets the NameNode's host; the default port.
	n, err = conf(t, ha(map[string]string{KeyAPI + ".prod.nn2": ":9999"})).NameService("prod")
	if err != nil || strings.Join(n.APIs(), " ") != "nn-a.example.com:9880 nn-b.example.com:9999" {
		t.Fatalf("%+v %v", n, err)
	}
	n, err = conf(t, ha(map[string]string{KeyAPI + ".prod.nn1": "ext-a:1"})).NameService("prod")
	if err != nil || n.NameNodes[0].API != "ext-a:1" {
		t.Fatalf("%+v %v", n, err)
	}
	for _, c := range []struct {
		site map[string]string
		ns   string
		want string
	}{
		{ha(nil), "nope", `not in dfs.nameservices`},
		{ha(nil), "bad.id", `not a nameservice id`},
		{ha(nil), "other", `names no host`},
		{ha(map[string]string{"dfs.ha.namenodes.prod": "nn1,nn3"}), "prod", "dfs.namenode.rpc-address.prod.nn3 is not set"},
		{ha(map[string]string{"dfs.namenode.rpc-address.prod.nn1": "nn-a"}), "prod", "is not host:port"},
		{ha(map[string]string{KeyAPI + ".prod.nn1": "x:0"}), "prod", "is not [host]:port"},
		{ha(map[string]string{"fs.defaultFS": "hdfs://nn-a:8020"}), "", "name the nameservice"},
		{map[string]string{}, "", "which NameNode"},
	} {
		_, err := conf(t, c.site).NameService(c.ns)
		if !errors.Is(err, ErrBadConf) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NameService(%q) = %v, want ErrBadConf %q", c.ns, err, c.want)
		}
	}
	// Without HA: the one NameNode, its namenode-ext as written (or on its host).
	n, err = conf(t, map[string]string{"fs.defaultFS": "hdfs://nn:9000", KeyAPI: ":9880"}).NameService("")
	if err != nil || n.Name != "" || strings.Join(n.RPCs(), "") != "nn:9000" || strings.Join(n.APIs(), "") != "nn:9880" {
		t.Fatalf("%+v %v", n, err)
	}
	n, err = conf(t, map[string]string{"dfs.namenode.rpc-address": "nn:8020", KeyAPI: "ext:1"}).NameService("")
	if err != nil || strings.Join(n.APIs(), "") != "ext:1" {
		t.Fatalf("%+v %v", n, err)
	}
}
