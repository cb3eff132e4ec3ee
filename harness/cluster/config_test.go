package cluster

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func parseSite(t *testing.T, b []byte) (keys []string, props map[string]string) {
	t.Helper()
	var conf struct {
		Properties []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(b, &conf); err != nil {
		t.Fatalf("generated XML does not parse: %v\n%s", err, b)
	}
	props = map[string]string{}
	for _, p := range conf.Properties {
		keys = append(keys, p.Name)
		props[p.Name] = p.Value
	}
	return keys, props
}

func TestSiteXML(t *testing.T) {
	in := map[string]string{"b.key": "x<y&z", "a.key": "1", "c.key": ""}
	b := SiteXML(in)
	if !strings.HasPrefix(string(b), "<?xml") || !strings.Contains(string(b), "<configuration>") {
		t.Fatalf("not a Hadoop configuration file:\n%s", b)
	}
	keys, got := parseSite(t, b)
	if strings.Join(keys, ",") != "a.key,b.key,c.key" {
		t.Errorf("keys not sorted: %v", keys)
	}
	for k, v := range in {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestSiteDefaultsAndOverrides(t *testing.T) {
	cfg := Config{
		Name:         "dc-a",
		BaseDir:      "/base",
		HadoopLib:    "/lib",
		DataNodes:    2,
		CoreSite:     map[string]string{"io.file.buffer.size": "65536"},
		HDFSSite:     map[string]string{"dfs.blocksize": "1048576", "dfs.heartbeat.interval": "2"},
		NameNodeSite: map[string]string{"dfs.namenode.plugins": "x.NN"},
		DataNodeSite: func(i int) map[string]string {
			if i == 1 {
				return map[string]string{"dfs.datanode.data.read.bandwidthPerSec": "1048576", "dfs.blocksize": "2097152"}
			}
			return nil
		},
	}.withDefaults()
	nn := topology{nns: []NameNodePorts{{RPC: 1001, HTTP: 1002}}}
	dn := []DataNodePorts{{2001, 2002, 2003}, {3001, 3002, 3003}}

	core := coreSite(cfg, nn)
	if core["fs.defaultFS"] != "hdfs://127.0.0.1:1001" || core["io.file.buffer.size"] != "65536" {
		t.Errorf("core-site: %v", core)
	}
	if core["hadoop.security.authentication"] != "simple" {
		t.Errorf("authentication = %q", core["hadoop.security.authentication"])
	}

	nnSite := nameNodeSite(cfg, nn, 0)
	want := map[string]string{
		"dfs.replication":                       "2", // min(3, DataNodes)
		"dfs.namenode.rpc-address":              "127.0.0.1:1001",
		"dfs.namenode.http-address":             "127.0.0.1:1002",
		"dfs.namenode.rpc-bind-host":            "127.0.0.1",
		"dfs.namenode.safemode.extension":       "0",
		"dfs.namenode.fs-limits.min-block-size": "0",
		"dfs.permissions.enabled":               "true",
		"dfs.block.access.token.enable":         "true",
		"dfs.blocksize":                         "1048576", // HDFSSite
		"dfs.heartbeat.interval":                "2",       // HDFSSite beats the default
		"dfs.namenode.plugins":                  "x.NN",    // NameNodeSite
		"dfs.namenode.name.dir":                 "file:///base/namenode/name",
	}
	for k, v := range want {
		if nnSite[k] != v {
			t.Errorf("namenode %s = %q, want %q", k, nnSite[k], v)
		}
	}

	d0, d1 := dataNodeSite(cfg, nn, 0, dn[0]), dataNodeSite(cfg, nn, 1, dn[1])
	if _, ok := d0["dfs.namenode.plugins"]; ok {
		t.Error("NameNodeSite leaked into a DataNode")
	}
	if d0["dfs.datanode.address"] != "127.0.0.1:2001" || d0["dfs.datanode.http.address"] != "127.0.0.1:2002" || d0["dfs.datanode.ipc.address"] != "127.0.0.1:2003" {
		t.Errorf("datanode 0 addresses: %v", d0)
	}
	if d1["dfs.datanode.address"] != "127.0.0.1:3001" || d1["dfs.datanode.data.dir"] != "file:///base/datanode-1/data" {
		t.Errorf("datanode 1 address/dir: %v", d1)
	}
	if d1["dfs.datanode.data.read.bandwidthPerSec"] != "1048576" || d1["dfs.blocksize"] != "2097152" {
		t.Errorf("per-node override not applied to datanode 1: %v", d1)
	}
	if _, ok := d0["dfs.datanode.data.read.bandwidthPerSec"]; ok || d0["dfs.blocksize"] != "1048576" {
		t.Errorf("datanode 1's override leaked into datanode 0: %v", d0)
	}
}

func TestReplicationDefault(t *testing.T) {
	for n, want := range map[int]string{1: "1", 2: "2", 3: "3", 5: "3"} {
		cfg := Config{BaseDir: "/b", HadoopLib: "/l", DataNodes: n}.withDefaults()
		if got := hdfsCommon(cfg, topology{})["dfs.replication"]; got != want {
			t.Errorf("%d datanodes: dfs.replication = %s, want %s", n, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Name: "dc-b", BaseDir: "/tmp/x", HadoopLib: "/lib"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	bad := []Config{
		{Name: "dc a", BaseDir: "/x", HadoopLib: "/l"},
		{Name: "../x", BaseDir: "/x", HadoopLib: "/l"},
		{Name: "dc-a", HadoopLib: "/l"},
		{Name: "dc-a", BaseDir: "/x", HadoopLib: "/l", DataNodes: -1},
		{Name: "dc-a", BaseDir: "/x", HadoopLib: "/l", StartupTimeout: -1},
	}
	for _, c := range bad {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: got %v, want ErrInvalidConfig", c, err)
		}
	}
	d := Config{BaseDir: "rel"}.withDefaults()
	if d.Name != DefaultName || d.DataNodes != DefaultDataNodes || !filepath.IsAbs(d.BaseDir) || d.HadoopLib == "" {
		t.Errorf("defaults: %+v", d)
	}
	if n := (Config{BaseDir: "/x", NoDataNodes: true, DataNodes: 3}).withDefaults().DataNodes; n != 0 {
		t.Errorf("NoDataNodes: DataNodes = %d", n)
	}
}

func TestAllocatePorts(t *testing.T) {
	nn, dns, err := allocatePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	all := []int{nn.RPC, nn.HTTP}
	for _, d := range dns {
		all = append(all, d.Xfer, d.HTTP, d.IPC)
	}
	if len(all) != 14 {
		t.Fatalf("got %d ports", len(all))
	}
	for _, p := range all {
		if p <= 0 || p > 65535 || seen[p] {
			t.Fatalf("bad or duplicate port %d in %v", p, all)
		}
		seen[p] = true
	}
}

func TestWriteConfAndCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "dc-a", BaseDir: dir, HadoopLib: "/opt/hadoop/lib", ExtraClasspath: []string{"/x/hooks.jar"},
		JavaOpts: []string{"-Dfoo=bar"}, Env: []string{"NT_TEST=1"}, Java: "/usr/bin/java"}.withDefaults()
	conf := filepath.Join(dir, "namenode", "conf")
	if err := writeConf(conf, map[string]string{"a": "1"}, map[string]string{"b": "2"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"core-site.xml", "hdfs-site.xml", "log4j.properties"} {
		if _, err := os.Stat(filepath.Join(conf, f)); err != nil {
			t.Error(err)
		}
	}
	cmd := specOf(cfg).command(NameNode, conf, filepath.Dir(conf), []string{"-XX:SharedArchiveFile=/a.jsa"}, "-format")
	args := strings.Join(cmd.Args, " ")
	for _, want := range []string{
		"-Xmx512m", "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/sun.security.x509=ALL-UNNAMED",
		"-Dhadoop.root.logger=INFO,console", "-Dfoo=bar",
		"-XX:SharedArchiveFile=/a.jsa", "-XX:TieredStopAtLevel=1",
		"-cp /opt/hadoop/lib/*:/x/hooks.jar:" + conf + " " + nameNodeClass + " -format",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("command lacks %q:\n%s", want, args)
		}
	}
	if cmd.Path != "/usr/bin/java" || cmd.Env[len(cmd.Env)-1] != "NT_TEST=1" {
		t.Errorf("path %s env tail %v", cmd.Path, cmd.Env[len(cmd.Env)-1])
	}
	dn := specOf(cfg).command(DataNode(2), conf, dir, nil)
	if !strings.Contains(strings.Join(dn.Args, " "), "-Xmx256m") || dn.Args[len(dn.Args)-1] != dataNodeClass {
		t.Errorf("datanode command: %v", dn.Args)
	}
}

func TestTail(t *testing.T) {
	if got := tail("a\nb\nc\n", 2); got != "b\nc" {
		t.Errorf("tail = %q", got)
	}
	if got := tail("a", 5); got != "a" {
		t.Errorf("tail = %q", got)
	}
}

func TestMergeClassLists(t *testing.T) {
	dir := t.TempDir()
	a, b, out := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "out")
	os.WriteFile(a, []byte("# comment\njava/lang/Object\norg/apache/X\n@lambda-form-invoker [LF] x y\nFoo id: 3 super: 0 source: /x.jar\n"), 0o644)
	// b was read while its JVM was still writing: the unterminated last line is dropped.
	os.WriteFile(b, []byte("org/apache/X\norg/apache/Y\norg/apache/Trunc"), 0o644)
	n, err := mergeClassLists(out, a, b, filepath.Join(dir, "missing"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if n != 3 || string(got) != "java/lang/Object\norg/apache/X\norg/apache/Y\n" {
		t.Errorf("merged %d:\n%s", n, got)
	}
}

func TestPlanCDS(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "hadoop", "lib")
	os.MkdirAll(lib, 0o755)
	os.WriteFile(filepath.Join(lib, "a.jar"), []byte("x"), 0o644)
	spec := launchSpec{Java: "sh", HadoopLib: lib} // any executable will do for the key
	if s := planCDS(spec, true, "/b", NameNode); s.archive != "" || s.record != nil {
		t.Errorf("disabled: %+v", s)
	}
	s := planCDS(spec, false, "/b", NameNode)
	if s.target == "" || s.record[NameNode] != "/b/namenode/classes.lst" || len(s.jvmOptions(DataNode(1))) != 0 {
		t.Fatalf("no archive yet: %+v", s)
	}
	if o := s.jvmOptions(DataNode(0)); len(o) != 1 || o[0] != "-XX:DumpLoadedClassList=/b/datanode-0/classes.lst" {
		t.Errorf("record options: %v", o)
	}
	os.MkdirAll(filepath.Dir(s.target), 0o755)
	os.WriteFile(s.target, []byte("archive"), 0o644)
	if s2 := planCDS(spec, false, "/b", NameNode); s2.archive != s.target || s2.jvmOptions(NameNode)[0] != "-XX:SharedArchiveFile="+s.target {
		t.Errorf("archive present: %+v", s2)
	}
	// A different jar set is a different archive.
	os.WriteFile(filepath.Join(lib, "b.jar"), []byte("y"), 0o644)
	if a2, _ := cdsPaths(spec); a2 == s.target {
		t.Error("archive key ignores the jars")
	}
}

func haTopology() topology {
	return topology{
		nns: []NameNodePorts{{RPC: 1001, HTTP: 1002}, {RPC: 1011, HTTP: 1012}},
		ha: &HAPorts{ZooKeeper: 2181, ZKFC: []int{8019, 8029},
			JournalNodes: []JournalNodePorts{{8485, 8480}, {8486, 8481}, {8487, 8482}}},
	}
}

func TestHASites(t *testing.T) {
	cfg := Config{Name: "dc-a", BaseDir: "/base", HadoopLib: "/lib", DataNodes: 2,
		HA:           &HAConfig{Nameservice: "dca", ZKSessionTimeout: 4 * time.Second},
		NameNodeSite: map[string]string{"dfs.namenode.plugins": "x.NN"},
		NameNodeSiteFor: func(i int) map[string]string {
			return map[string]string{"newtricks.namenode.ext.api.address": fmt.Sprintf("127.0.0.1:%d", 9880+i)}
		},
	}.withDefaults()
	tp := haTopology()

	core := coreSite(cfg, tp)
	for k, v := range map[string]string{
		"fs.defaultFS":                    "hdfs://dca",
		"ha.zookeeper.quorum":             "127.0.0.1:2181",
		"ha.zookeeper.session-timeout.ms": "4000",
		"hadoop.tmp.dir":                  "/base/tmp",
	} {
		if core[k] != v {
			t.Errorf("core-site %s = %q, want %q", k, core[k], v)
		}
	}
	// Each NameNode (and its ZKFC) keeps its own hadoop.tmp.dir: the hooks' resume point is in it.
	if a, b := nameNodeCore(cfg, tp, 0)["hadoop.tmp.dir"], nameNodeCore(cfg, tp, 1)["hadoop.tmp.dir"]; a != "/base/tmp/namenode-0" || b != "/base/tmp/namenode-1" {
		t.Errorf("namenode tmp dirs %q %q", a, b)
	}

	shared := map[string]string{
		"dfs.nameservices":                       "dca",
		"dfs.ha.namenodes.dca":                   "nn0,nn1",
		"dfs.namenode.rpc-address.dca.nn0":       "127.0.0.1:1001",
		"dfs.namenode.rpc-address.dca.nn1":       "127.0.0.1:1011",
		"dfs.namenode.http-address.dca.nn0":      "127.0.0.1:1002",
		"dfs.namenode.http-address.dca.nn1":      "127.0.0.1:1012",
		"dfs.ha.zkfc.port.dca.nn0":               "8019",
		"dfs.ha.zkfc.port.dca.nn1":               "8029",
		"dfs.namenode.shared.edits.dir":          "qjournal://127.0.0.1:8485;127.0.0.1:8486;127.0.0.1:8487/dca",
		"dfs.client.failover.proxy.provider.dca": "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
		"dfs.ha.automatic-failover.enabled":      "true",
		"dfs.ha.fencing.methods":                 "shell(/bin/true)",
		"dfs.namenode.rpc-bind-host":             "127.0.0.1",
	}
	nn0, nn1 := nameNodeSite(cfg, tp, 0), nameNodeSite(cfg, tp, 1)
	dn := dataNodeSite(cfg, tp, 1, DataNodePorts{3001, 3002, 3003})
	jn := journalNodeSite(cfg, tp, 2)
	for name, site := range map[string]map[string]string{"nn0": nn0, "nn1": nn1, "datanode": dn, "journalnode": jn, "client": hdfsCommon(cfg, tp)} {
		for k, v := range shared {
			if site[k] != v {
				t.Errorf("%s %s = %q, want %q", name, k, site[k], v)
			}
		}
		// A NameNode of a nameservice has no address of its own outside it.
		for _, k := range []string{"dfs.namenode.rpc-address", "dfs.namenode.http-address"} {
			if v, ok := site[k]; ok {
				t.Errorf("%s has %s = %q", name, k, v)
			}
		}
	}
	for i, site := range []map[string]string{nn0, nn1} {
		want := map[string]string{
			"dfs.ha.namenode.id":                 HANameNodeID(i),
			"dfs.namenode.name.dir":              fmt.Sprintf("file:///base/namenode-%d/name", i),
			"dfs.namenode.plugins":               "x.NN",
			"newtricks.namenode.ext.api.address": fmt.Sprintf("127.0.0.1:%d", 9880+i),
		}
		for k, v := range want {
			if site[k] != v {
				t.Errorf("nn%d %s = %q, want %q", i, k, site[k], v)
			}
		}
	}
	for _, k := range []string{"dfs.ha.namenode.id", "dfs.namenode.plugins", "newtricks.namenode.ext.api.address"} {
		if _, ok := dn[k]; ok {
			t.Errorf("datanode has NameNode key %s", k)
		}
	}
	for k, v := range map[string]string{
		"dfs.journalnode.rpc-address":  "127.0.0.1:8487",
		"dfs.journalnode.http-address": "127.0.0.1:8482",
		"dfs.journalnode.edits.dir":    "/base/journalnode-2/edits",
	} {
		if jn[k] != v {
			t.Errorf("journalnode 2 %s = %q, want %q", k, jn[k], v)
		}
	}
	zoo := zooCfg(cfg, 2181)
	for _, want := range []string{"clientPort=2181\n", "clientPortAddress=127.0.0.1\n", "dataDir=/base/zookeeper/data\n", "admin.enableServer=false\n"} {
		if !strings.Contains(zoo, want) {
			t.Errorf("zoo.cfg lacks %q:\n%s", want, zoo)
		}
	}

	// Manual failover: no ZooKeeper, no ZKFC ports, automatic failover off.
	cfg.HA = &HAConfig{Nameservice: "dca", Manual: true}
	tp.ha.ZooKeeper, tp.ha.ZKFC = 0, nil
	if _, ok := coreSite(cfg, tp)["ha.zookeeper.quorum"]; ok {
		t.Error("manual HA names a ZooKeeper quorum")
	}
	m := nameNodeSite(cfg, tp, 0)
	if m["dfs.ha.automatic-failover.enabled"] != "false" {
		t.Errorf("manual HA: automatic-failover.enabled = %q", m["dfs.ha.automatic-failover.enabled"])
	}
	if _, ok := m["dfs.ha.zkfc.port.dca.nn0"]; ok {
		t.Error("manual HA sets a ZKFC port")
	}

	// Without HA nothing of it appears, and NameNodeSiteFor(0) applies to the one NameNode.
	plain := Config{BaseDir: "/base", HadoopLib: "/lib", NameNodeSiteFor: cfg.NameNodeSiteFor}.withDefaults()
	one := topology{nns: []NameNodePorts{{RPC: 1001, HTTP: 1002}}}
	s := nameNodeSite(plain, one, 0)
	if _, ok := s["dfs.nameservices"]; ok || s["dfs.namenode.rpc-address"] != "127.0.0.1:1001" || s["newtricks.namenode.ext.api.address"] != "127.0.0.1:9880" {
		t.Errorf("plain namenode site: %v", s)
	}
}

func TestHAValidate(t *testing.T) {
	ok := Config{BaseDir: "/x", HadoopLib: "/l", HA: &HAConfig{}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("default HA config: %v", err)
	}
	if ns := ok.withDefaults().HA.Nameservice; ns != DefaultNameservice {
		t.Errorf("default nameservice %q", ns)
	}
	if ok.HA.Nameservice != "" {
		t.Error("withDefaults changed the caller's HAConfig")
	}
	for _, ha := range []*HAConfig{
		{Nameservice: "Upper"},
		{Nameservice: "dot.ted"},
		{Nameservice: "-x"},
		{Manual: true, ZKSessionTimeout: time.Second},
	} {
		c := Config{BaseDir: "/x", HadoopLib: "/l", HA: ha}
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: got %v, want ErrInvalidConfig", *ha, err)
		}
	}
}

func TestAllocateHAPorts(t *testing.T) {
	for _, manual := range []bool{false, true} {
		nns, ha, err := allocateHAPorts(manual)
		if err != nil {
			t.Fatal(err)
		}
		all := []int{nns[0].RPC, nns[0].HTTP, nns[1].RPC, nns[1].HTTP}
		for _, j := range ha.JournalNodes {
			all = append(all, j.RPC, j.HTTP)
		}
		all = append(all, ha.ZKFC...)
		if ha.ZooKeeper != 0 {
			all = append(all, ha.ZooKeeper)
		}
		want := 10
		if !manual {
			want = 13
		}
		if len(all) != want || len(ha.JournalNodes) != 3 {
			t.Fatalf("manual=%v: %d ports %v", manual, len(all), all)
		}
		seen := map[int]bool{}
		for _, p := range all {
			if p <= 0 || seen[p] {
				t.Fatalf("bad or duplicate port %d in %v", p, all)
			}
			seen[p] = true
		}
	}
}

func TestDaemonCommands(t *testing.T) {
	cfg := Config{BaseDir: "/b", HadoopLib: "/opt/hadoop/lib", Java: "/usr/bin/java", SmallHeap: "48m"}.withDefaults()
	spec := specOf(cfg)
	for _, tc := range []struct {
		d            Daemon
		role, class  string
		heap, option string
	}{
		{NameNode, "namenode", nameNodeClass, "-Xmx512m", ""},
		{HANameNode(1), "namenode", nameNodeClass, "-Xmx512m", ""},
		{DataNode(3), "datanode", dataNodeClass, "-Xmx256m", ""},
		{JournalNode(2), "journalnode", journalNodeClass, "-Xmx48m", ""},
		{ZKFC(0), "zkfc", zkfcClass, "-Xmx48m", "-Dzookeeper.sasl.client=false"},
		{ZooKeeper, "zookeeper", zooKeeperClass, "-Xmx48m", "-Dzookeeper.admin.enableServer=false"},
		{haAdmin, "haadmin", haAdminClass, "-Xmx48m", ""},
	} {
		if got := tc.d.role(); got != tc.role {
			t.Errorf("%s: role %q, want %q", tc.d, got, tc.role)
		}
		cmd := spec.command(tc.d, "/b/x/conf", "/b/x", nil, "-arg")
		args := strings.Join(cmd.Args, " ")
		if !strings.Contains(args, " "+tc.heap+" ") || !strings.HasSuffix(args, " "+tc.class+" -arg") || !strings.Contains(args, tc.option) {
			t.Errorf("%s command: %s", tc.d, args)
		}
	}
}
