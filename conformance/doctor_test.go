package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/newtricks/newtricks/cmd/newtricks/doctor"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
)

// runDoctor runs `newtricks doctor --json` and returns its report and exit status.
func runDoctor(t *testing.T, a extcluster.Artifacts, args ...string) (*doctor.Report, int) {
	t.Helper()
	if _, err := os.Stat(a.NewtricksCLI); err != nil {
		t.Fatalf("the CLI is needed: %v (make build)", err)
	}
	cmd := exec.Command(a.NewtricksCLI, append([]string{"doctor", "--json"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("newtricks doctor: %v", err)
	}
	var r doctor.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("newtricks doctor %v: exit %d, not a JSON report: %v\nstdout:\n%s\nstderr:\n%s", args, code, err, stdout.String(), stderr.String())
	}
	return &r, code
}

func reportText(r *doctor.Report) string {
	var b strings.Builder
	doctor.Print(&b, r)
	return b.String()
}

// wantFinding fails the test unless r has a finding of check with status st (and, for a
// failure, naming key).
func wantFinding(t *testing.T, r *doctor.Report, check string, st doctor.Status, key string) {
	t.Helper()
	for _, f := range r.Find(check) {
		if f.Status == st && (st != doctor.Fail || f.Key == key) {
			return
		}
	}
	t.Errorf("no %s finding for %s (key %q) in:\n%s", st, check, key, reportText(r))
}

func hadoopLib(a extcluster.Artifacts) string {
	if a.HadoopLibDir != "" {
		return a.HadoopLibDir
	}
	return cluster.DefaultHadoopLib()
}

// copyConf copies a daemon's conf dir and applies mutate to its hdfs-site.xml.
func copyConf(t *testing.T, src string, mutate func(hdfs map[string]string)) string {
	t.Helper()
	dst := t.TempDir()
	for _, name := range []string{"core-site.xml", "hdfs-site.xml"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "hdfs-site.xml" && mutate != nil {
			var doc struct {
				P []struct {
					Name  string `xml:"name"`
					Value string `xml:"value"`
				} `xml:"property"`
			}
			if err := xml.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			m := map[string]string{}
			for _, p := range doc.P {
				m[p.Name] = p.Value
			}
			mutate(m)
			b = cluster.SiteXML(m)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// binaryMissingALibrary builds a program linked against a shared library and removes the
// library, as a datanode-ext whose FFmpeg libraries are not installed.
func binaryMissingALibrary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("gcc is needed to build the broken binary: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "lib.c"), []byte("int nt_missing(void) { return 0; }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.c"), []byte("int nt_missing(void);\nint main(void) { return nt_missing(); }\n"), 0o644)
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-o", filepath.Join(dir, "libntmissing.so"), filepath.Join(dir, "lib.c")},
		{"-o", filepath.Join(dir, "fake-ext"), filepath.Join(dir, "main.c"), "-L" + dir, "-lntmissing"},
	} {
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	os.Remove(filepath.Join(dir, "libntmissing.so"))
	return filepath.Join(dir, "fake-ext")
}

// TestDoctor runs `newtricks doctor` against a cluster the harness started with the hooks:
// the good configuration passes, with every daemon's co-process healthy; then each
// deliberately broken copy of that configuration is caught, with the key to change and exit
// status 1.
func TestDoctor(t *testing.T) {
	a := artifacts(t)
	c, lay := startCluster(t, a, extcluster.Options{Name: "doctor", DataNodes: 2})
	st := c.State()
	nnConf, dnConf := st.NameNode.ConfDir, st.DataNodes[0].ConfDir
	nnHTTP := c.NameNodeHTTPAddr()
	cp := filepath.Join(hadoopLib(a), "*") + ":" + a.HooksJar
	base := []string{"--classpath", cp, "--namenode-http", nnHTTP}

	// The co-processes start after their daemons: a datanode-ext once its DataNode has its
	// dataset. Doctor reports one that does not serve yet as a failure, rightly.
	for _, m := range append([]string{lay.NameNodeMetrics}, lay.DataNodeMetrics...) {
		eventually(t, 60*time.Second, "co-process metrics at "+m, func() error {
			_, err := doctor.Scrape(context.Background(), http.DefaultClient, m)
			return err
		})
	}

	t.Run("good", func(t *testing.T) {
		args := append([]string{"--conf", nnConf}, base...)
		for _, m := range lay.DataNodeMetrics {
			args = append(args, "--metrics", m)
		}
		r, code := runDoctor(t, a, args...)
		t.Logf("newtricks doctor (NameNode conf):\n%s", reportText(r))
		if code != 0 || r.Fail != 0 {
			t.Fatalf("good cluster: exit %d, %d failures", code, r.Fail)
		}
		for _, check := range []string{"namenode.plugin", "namenode.ext-config", "namenode.binary", "namenode.libraries", "namenode.handshake",
			"namenode.audit-loggers", "namenode.event-journal", "socket.dir", "hooks.jar", "versions", "namenode.reachable", "namenode.safemode",
			"datanodes.live", "running-conf", "namenode.coprocess", "namenode.audit-queue", "coprocess.metrics"} {
			wantFinding(t, r, check, doctor.Pass, "")
		}
		if n := len(r.Find("coprocess.metrics")); n != 1+len(lay.DataNodeMetrics) {
			t.Errorf("scraped %d co-processes, want %d", n, 1+len(lay.DataNodeMetrics))
		}

		r, code = runDoctor(t, a, append([]string{"--conf", dnConf}, base...)...)
		t.Logf("newtricks doctor (DataNode conf):\n%s", reportText(r))
		if code != 0 || r.Fail != 0 {
			t.Fatalf("good cluster, DataNode conf: exit %d, %d failures", code, r.Fail)
		}
		for _, check := range []string{"datanode.plugin", "datanode.ext-config", "datanode.binary", "coprocess.metrics", "datanode.handshake", "datanode.block-tokens"} {
			wantFinding(t, r, check, doctor.Pass, "")
		}
		if n := 0; true {
			for _, f := range r.Find("datanode.coprocess") {
				if f.Status == doctor.Pass {
					n++
				}
			}
			if n != 2 {
				t.Errorf("%d healthy datanode-ext found, want 2:\n%s", n, reportText(r))
			}
		}
	})

	t.Run("conf changed since the NameNode started", func(t *testing.T) {
		conf := copyConf(t, nnConf, func(m map[string]string) { m["newtricks.namenode.ext.events.retain"] = "500" })
		r, code := runDoctor(t, a, append([]string{"--conf", conf}, base...)...)
		if code != 0 {
			t.Errorf("exit %d, want 0 (a pending restart is a warning)", code)
		}
		wantFinding(t, r, "running-conf", doctor.Warn, "")
		for _, f := range r.Find("running-conf") {
			if f.Status == doctor.Warn && (f.Key != "newtricks.namenode.ext.events.retain" || !strings.Contains(f.Message, `running "10000"`) && !strings.Contains(f.Message, `running ""`)) {
				t.Errorf("finding %+v", f)
			}
		}
		if t.Failed() {
			t.Logf("report:\n%s", reportText(r))
		}
	})
	t.Run("block tokens off here, on in the running cluster", func(t *testing.T) {
		conf := copyConf(t, dnConf, func(m map[string]string) { m["dfs.block.access.token.enable"] = "false" })
		r, code := runDoctor(t, a, append([]string{"--conf", conf}, base...)...)
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		wantFinding(t, r, "running-conf", doctor.Fail, "dfs.block.access.token.enable")
		if t.Failed() {
			t.Logf("report:\n%s", reportText(r))
		}
	})

	notExec := filepath.Join(t.TempDir(), "namenode-ext")
	if b, err := os.ReadFile(a.NameNodeExt); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(notExec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	openSock := t.TempDir()
	if err := os.Chmod(openSock, 0o755); err != nil {
		t.Fatal(err)
	}
	missingLib := binaryMissingALibrary(t)
	cases := []struct {
		name, conf string
		mutate     func(m map[string]string)
		args       []string
		check, key string
	}{
		{"audit logger list without default", nnConf, func(m map[string]string) {
			m["dfs.namenode.audit.loggers"] = extcluster.AuditLoggerClass
		}, nil, "namenode.audit-loggers", "dfs.namenode.audit.loggers"},
		{"binary not executable", nnConf, func(m map[string]string) {
			m["newtricks.namenode.ext.binary"] = notExec
		}, nil, "namenode.binary", "newtricks.namenode.ext.binary"},
		{"binary missing a shared library", dnConf, func(m map[string]string) {
			m["newtricks.datanode.ext.binary"] = missingLib
		}, nil, "datanode.libraries", "newtricks.datanode.ext.binary"},
		{"binary that is not a co-process", nnConf, func(m map[string]string) {
			m["newtricks.namenode.ext.binary"] = "/bin/true"
		}, nil, "namenode.handshake", "newtricks.namenode.ext.binary"},
		{"socket dir open to others", nnConf, func(m map[string]string) {
			m["newtricks.ext.socket.dir"] = openSock
		}, nil, "socket.dir", "newtricks.ext.socket.dir"},
		{"datanode-ext without block tokens", dnConf, func(m map[string]string) {
			m["dfs.block.access.token.enable"] = "false"
		}, nil, "datanode.block-tokens", "dfs.block.access.token.enable"},
		{"hooks jar not on the classpath", nnConf, nil,
			[]string{"--classpath", filepath.Join(hadoopLib(a), "*")}, "hooks.jar", ""},
		{"event journal dir without its plugin (the NameNode would not start)", nnConf, func(m map[string]string) {
			delete(m, "dfs.namenode.edits.journal-plugin.newtricks")
		}, nil, "namenode.event-journal", "dfs.namenode.edits.journal-plugin.newtricks"},
		{"a value namenode-ext refuses", nnConf, func(m map[string]string) {
			m["newtricks.hotspot.readers-per-replica"] = "0"
		}, nil, "namenode.ext-config", "newtricks.hotspot.readers-per-replica"},
		{"plugin class misspelt", nnConf, func(m map[string]string) {
			m["dfs.namenode.plugins"] = "io.newtricks.hadoop.NamenodePlugin"
		}, nil, "enabled", "dfs.namenode.plugins"},
		{"NameNode address wrong", nnConf, nil,
			[]string{"--namenode-http", "127.0.0.1:1"}, "namenode.reachable", "dfs.namenode.http-address"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conf := copyConf(t, tc.conf, tc.mutate)
			args := append([]string{"--conf", conf}, base...)
			args = append(args, tc.args...) // later flags win
			r, code := runDoctor(t, a, args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			wantFinding(t, r, tc.check, doctor.Fail, tc.key)
			if t.Failed() {
				t.Logf("report:\n%s", reportText(r))
			}
		})
	}
}

// TestDoctorBrokenCluster starts a cluster whose namenode-ext binary is not executable: the
// NameNode serves anyway, and doctor reports both the cause (the file's mode) and the effect
// (the hook's co-process is not healthy, from the running NameNode's JMX).
func TestDoctorBrokenCluster(t *testing.T) {
	a := artifacts(t)
	bad := filepath.Join(t.TempDir(), "namenode-ext")
	b, err := os.ReadFile(a.NameNodeExt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := startCluster(t, a, extcluster.Options{Name: "doctor-broken", DataNodes: 1, NameNodeExt: bad})
	start := time.Now()
	r, code := runDoctor(t, a, "--conf", c.State().NameNode.ConfDir, "--namenode-http", c.NameNodeHTTPAddr(),
		"--classpath", filepath.Join(hadoopLib(a), "*")+":"+a.HooksJar)
	t.Logf("newtricks doctor on the broken cluster (%s):\n%s", time.Since(start).Round(time.Millisecond), reportText(r))
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	wantFinding(t, r, "namenode.binary", doctor.Fail, "newtricks.namenode.ext.binary")
	wantFinding(t, r, "namenode.coprocess", doctor.Fail, "newtricks.namenode.ext.binary")
	wantFinding(t, r, "namenode.reachable", doctor.Pass, "")
}

// TestDoctorSecure runs doctor against a Kerberized cluster with HTTPS-only DataNodes: the
// co-processes' Kerberos and TLS material checks pass, and the DataNodes' hooks are read over
// HTTPS once doctor trusts their certificate (--ca), and not before.
func TestDoctorSecure(t *testing.T) {
	a := artifacts(t)
	s := startSecureCluster(t, a, extcluster.Options{Name: "doctor-secure", DataNodes: 2})
	st := s.c.State()
	cp := filepath.Join(hadoopLib(a), "*") + ":" + a.HooksJar
	for _, m := range append([]string{s.lay.NameNodeMetrics}, s.lay.DataNodeMetrics...) {
		eventually(t, 60*time.Second, "co-process metrics at "+m, func() error {
			_, err := doctor.Scrape(context.Background(), http.DefaultClient, m)
			return err
		})
	}
	dnCA := filepath.Join(t.TempDir(), "datanode.pem")
	if out, err := exec.Command("keytool", "-exportcert", "-rfc", "-alias", "datanode", "-keystore", s.sec.Keystore,
		"-storepass", s.sec.StorePass, "-file", dnCA).CombinedOutput(); err != nil {
		t.Fatalf("keytool -exportcert: %v\n%s", err, out)
	}
	args := []string{"--conf", st.DataNodes[0].ConfDir, "--classpath", cp, "--namenode-http", s.c.NameNodeHTTPAddr()}

	r, code := runDoctor(t, a, args...)
	t.Logf("without --ca:\n%s", reportText(r))
	wantFinding(t, r, "security", doctor.Pass, "")
	for _, f := range r.Find("datanode.hook") {
		if f.Status != doctor.Warn || !strings.Contains(f.Message, "https://") || !strings.Contains(f.Message, "certificate") {
			t.Errorf("unverified HTTPS DataNode: %+v", f)
		}
	}
	if len(r.Find("datanode.hook")) != 2 || code != 0 {
		t.Errorf("without --ca: exit %d, %d datanode.hook findings, want 0 and 2 warnings", code, len(r.Find("datanode.hook")))
	}

	r, code = runDoctor(t, a, append(args, "--ca", dnCA)...)
	t.Logf("with --ca:\n%s", reportText(r))
	// The one warning: the NameNode's /conf wants SPNEGO (the harness whitelists only /jmx),
	// so doctor cannot compare its running configuration, and says so.
	if code != 0 || r.Fail != 0 || r.Warn != 1 {
		t.Errorf("secure cluster with --ca: exit %d, %d failures, %d warnings, want 0, 0, 1", code, r.Fail, r.Warn)
	}
	for _, f := range r.Find("running-conf") {
		if f.Status == doctor.Warn && !strings.Contains(f.Message, "SPNEGO") {
			t.Errorf("running-conf warning does not explain the 401: %s", f.Message)
		}
	}
	n := 0
	for _, f := range r.Find("datanode.coprocess") {
		if f.Status == doctor.Pass {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d healthy datanode-ext read over HTTPS, want 2", n)
	}
	wantFinding(t, r, "security", doctor.Pass, "")
}
