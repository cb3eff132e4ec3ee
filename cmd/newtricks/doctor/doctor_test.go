package doctor

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeSite(t *testing.T, dir, name string, props map[string]string) {
	t.Helper()
	type prop struct {
		Name  string `xml:"name"`
		Value string `xml:"value"`
	}
	var doc struct {
		XMLName xml.Name `xml:"configuration"`
		P       []prop   `xml:"property"`
	}
	for k, v := range props {
		doc.P = append(doc.P, prop{k, v})
	}
	b, err := xml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture is a conf dir enabling both hooks, with a socket dir and a "binary" that is an
// executable shell script (not a co-process).
type fixture struct {
	dir, sock, bin string
	hdfs, core     map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{dir: filepath.Join(base, "conf"), sock: filepath.Join(base, "sock"), bin: filepath.Join(base, "not-a-coprocess")}
	for _, d := range []string{f.dir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(f.sock, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.bin, []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.core = map[string]string{"hadoop.tmp.dir": filepath.Join(base, "tmp")}
	f.hdfs = map[string]string{
		keyNNPlugins:     NameNodePluginClass,
		keyDNPlugins:     DataNodePluginClass,
		keyAuditLoggers:  "default," + AuditLoggerClass,
		keyNNBinary:      f.bin,
		keyDNBinary:      f.bin,
		keySocketDir:     f.sock,
		keyBlockToken:    "true",
		keyEditsDir:      "file://" + filepath.Join(base, "name") + "," + journalExampleURI,
		keyJournalPlugin: EventJournalClass,
	}
	return f
}

func (f *fixture) run(t *testing.T, mutate func(f *fixture)) *Report {
	t.Helper()
	if mutate != nil {
		mutate(f)
	}
	writeSite(t, f.dir, "core-site.xml", f.core)
	writeSite(t, f.dir, "hdfs-site.xml", f.hdfs)
	r, err := Run(context.Background(), Options{ConfDir: f.dir, Offline: true, Classpath: []string{filepath.Join(f.dir, "*")}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func status(r *Report, check string) Status {
	fs := r.Find(check)
	if len(fs) == 0 {
		return ""
	}
	worst := Pass
	for _, f := range fs {
		if f.Status == Fail || (f.Status == Warn && worst == Pass) {
			worst = f.Status
		}
	}
	return worst
}

// TestBrokenConfigs: each deliberately broken setting is found, as a failure of the right
// check naming the key to change, and the same check passes on the good fixture.
func TestBrokenConfigs(t *testing.T) {
	cases := []struct {
		name   string
		check  string
		key    string
		mutate func(f *fixture)
	}{
		{"audit list without default", "namenode.audit-loggers", keyAuditLoggers,
			func(f *fixture) { f.hdfs[keyAuditLoggers] = AuditLoggerClass }},
		{"no binary key", "namenode.binary", keyNNBinary,
			func(f *fixture) { delete(f.hdfs, keyNNBinary) }},
		{"relative binary", "namenode.binary", keyNNBinary,
			func(f *fixture) { f.hdfs[keyNNBinary] = "bin/namenode-ext" }},
		{"missing binary", "datanode.binary", keyDNBinary,
			func(f *fixture) { f.hdfs[keyDNBinary] = "/nonexistent/datanode-ext" }},
		{"binary not executable", "datanode.binary", keyDNBinary,
			func(f *fixture) { os.Chmod(f.bin, 0o644) }},
		{"binary world-writable", "datanode.binary", keyDNBinary,
			func(f *fixture) { os.Chmod(f.bin, 0o777) }},
		{"binary in a world-writable directory", "datanode.binary", keyDNBinary,
			func(f *fixture) { os.Chmod(filepath.Dir(f.bin), 0o777) }},
		{"no block tokens", "datanode.block-tokens", keyBlockToken,
			func(f *fixture) { f.hdfs[keyBlockToken] = "false" }},
		{"socket dir open to others", "socket.dir", keySocketDir,
			func(f *fixture) { os.Chmod(f.sock, 0o755) }},
		{"socket dir is a file", "socket.dir", keySocketDir,
			func(f *fixture) { os.Remove(f.sock); os.WriteFile(f.sock, nil, 0o600) }},
		{"socket dir too long", "socket.dir", keySocketDir,
			func(f *fixture) { f.hdfs[keySocketDir] = "/" + strings.Repeat("x", 80) }},
		{"api address not host:port", "namenode.address", "newtricks.namenode.ext.api.address",
			func(f *fixture) { f.hdfs["newtricks.namenode.ext.api.address"] = "9880" }},
		{"unknown authentication", "security", keyAuth,
			func(f *fixture) { f.core[keyAuth] = "ldap" }},
		{"kerberos without a keytab for namenode-ext", "security", "newtricks.namenode.ext.kerberos.principal",
			func(f *fixture) { f.core[keyAuth] = "kerberos" }},
		{"namenode-ext refuses a value", "namenode.ext-config", "newtricks.namenode.ext.events.retain",
			func(f *fixture) { f.hdfs["newtricks.namenode.ext.events.retain"] = "0" }},
		{"hotspot refuses a value", "namenode.ext-config", "newtricks.hotspot.max-factor.busy",
			func(f *fixture) { f.hdfs["newtricks.hotspot.max-factor.busy"] = "many" }},
		{"mirror rules without a destination", "namenode.ext-config", "newtricks.mirror.dest.namenode",
			func(f *fixture) {
				f.hdfs["newtricks.mirror.rules"] = "ckpt"
				f.hdfs["newtricks.mirror.rule.ckpt.source"] = "/ckpt/{job}/step_{step}"
			}},
		{"datanode-ext refuses a value", "datanode.ext-config", "newtricks.datanode.ext.read.max.bytes",
			func(f *fixture) { f.hdfs["newtricks.datanode.ext.read.max.bytes"] = "0" }},
		{"journal dir without the journal plugin", "namenode.event-journal", keyJournalPlugin,
			func(f *fixture) { delete(f.hdfs, keyJournalPlugin) }},
		{"journal plugin misspelt", "namenode.event-journal", keyJournalPlugin,
			func(f *fixture) { f.hdfs[keyJournalPlugin] = "io.newtricks.hadoop.EventsJournal" }},
		{"journal required", "namenode.event-journal", keyEditsRequired,
			func(f *fixture) { f.hdfs[keyEditsRequired] = journalExampleURI }},
		{"hooks jar not on the classpath", "hooks.jar", "", nil},
		{"binary is not a co-process", "namenode.handshake", keyNNBinary, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newFixture(t).run(t, c.mutate)
			if status(r, c.check) != Fail {
				t.Fatalf("%s: %v, want fail:\n%s", c.check, r.Find(c.check), dump(r))
			}
			if r.OK() {
				t.Fatal("report OK despite a failure")
			}
			for _, f := range r.Find(c.check) {
				if f.Status == Fail && f.Key != c.key {
					t.Errorf("finding names key %q, want %q", f.Key, c.key)
				}
			}
		})
	}
	good := newFixture(t).run(t, nil)
	for _, c := range cases {
		if c.mutate != nil && status(good, c.check) == Fail {
			t.Errorf("good fixture fails %s:\n%s", c.check, dump(good))
		}
	}
}

func TestNotEnabled(t *testing.T) {
	r := newFixture(t).run(t, func(f *fixture) {
		f.hdfs = map[string]string{keyNNBinary: f.bin}
	})
	if status(r, "enabled") != Fail || status(r, "namenode.plugin") != Warn {
		t.Fatalf("not enabled:\n%s", dump(r))
	}
}

func TestAuditListWithoutOurs(t *testing.T) {
	r := newFixture(t).run(t, func(f *fixture) { f.hdfs[keyAuditLoggers] = "default" })
	if status(r, "namenode.audit-loggers") != Pass {
		t.Fatalf("audit list without AuditForwarder, reactive hints off:\n%s", dump(r))
	}
	r = newFixture(t).run(t, func(f *fixture) {
		f.hdfs[keyAuditLoggers] = "default"
		f.hdfs["newtricks.hotspot.reactive"] = "true"
		f.hdfs["newtricks.hotspot.reactive.user"] = "hotspot-svc"
	})
	if status(r, "namenode.audit-loggers") != Fail {
		t.Fatalf("audit list without AuditForwarder, reactive hints on:\n%s", dump(r))
	}
}

func TestConfExpansion(t *testing.T) {
	dir := t.TempDir()
	writeSite(t, dir, "core-site.xml", map[string]string{"hadoop.tmp.dir": "/data/${user.name}/tmp", "a": "1"})
	writeSite(t, dir, "hdfs-site.xml", map[string]string{"a": "2", "b": "${a}-${env.NT_DOCTOR_TEST}", "loop": "${loop}"})
	t.Setenv("NT_DOCTOR_TEST", "x")
	c, err := LoadConf(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Get("a", "") != "2" || c.From["a"] != "hdfs-site.xml" || c.Get("b", "") != "2-x" {
		t.Errorf("a=%q (from %s) b=%q", c.Get("a", ""), c.From["a"], c.Get("b", ""))
	}
	if strings.Contains(c.Get("hadoop.tmp.dir", ""), "${") || c.Get("missing", "${nope}") != "${nope}" {
		t.Errorf("expansion: %q %q", c.Get("hadoop.tmp.dir", ""), c.Get("missing", "${nope}"))
	}
	_ = c.Get("loop", "") // must terminate
	if _, err := LoadConf(t.TempDir()); err == nil {
		t.Error("conf dir without hdfs-site.xml accepted")
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "hdfs-site.xml"), []byte("<configuration><property>"), 0o644)
	if _, err := LoadConf(bad); err == nil {
		t.Error("malformed hdfs-site.xml accepted")
	}
}

func dump(r *Report) string {
	var b strings.Builder
	Print(&b, r)
	return b.String()
}

// TestSocketDirOwner: a socket dir not owned by the daemons' user is refused.
func TestSocketDirOwner(t *testing.T) {
	f := newFixture(t)
	f.run(t, nil) // writes the conf
	r, err := Run(context.Background(), Options{ConfDir: f.dir, Offline: true, User: "hdfs-daemon-user"})
	if err != nil {
		t.Fatal(err)
	}
	fs := r.Find("socket.dir")
	if len(fs) != 1 || fs[0].Status != Fail || !strings.Contains(fs[0].Message, "not by hdfs-daemon-user") {
		t.Fatalf("socket dir owner: %+v", fs)
	}
}

func TestGuessKey(t *testing.T) {
	conf := map[string]string{"newtricks.hotspot.readers-per-replica": "0", "newtricks.hotspot.max-files": "1"}
	for msg, want := range map[string]string{
		"bad configuration: newtricks.mirror.dest.namenode: required":  "newtricks.mirror.dest.namenode",
		"hotspot config: bad configuration: readers-per-replica 0 < 1": "newtricks.hotspot.readers-per-replica",
		"something unrelated": "",
	} {
		if got := guessKey(msg, conf); got != want {
			t.Errorf("guessKey(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestEventJournalOff(t *testing.T) {
	r := newFixture(t).run(t, func(f *fixture) { delete(f.hdfs, keyEditsDir); delete(f.hdfs, keyJournalPlugin) })
	if status(r, "namenode.event-journal") != Warn {
		t.Fatalf("journal off:\n%s", dump(r))
	}
	r = newFixture(t).run(t, nil)
	if status(r, "namenode.event-journal") != Pass {
		t.Fatalf("journal on:\n%s", dump(r))
	}
}
