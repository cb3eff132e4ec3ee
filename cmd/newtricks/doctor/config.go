package doctor

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
)

// Class names and keys (see BUILDING.md).
const (
	NameNodePluginClass = "io.newtricks.hadoop.NameNodePlugin"
	DataNodePluginClass = "io.newtricks.hadoop.DataNodePlugin"
	AuditLoggerClass    = "io.newtricks.hadoop.AuditForwarder"

	keyNNPlugins    = "dfs.namenode.plugins"
	keyDNPlugins    = "dfs.datanode.plugins"
	keyAuditLoggers = "dfs.namenode.audit.loggers"
	keyNNBinary     = "newtricks.namenode.ext.binary"
	keyDNBinary     = "newtricks.datanode.ext.binary"
	keySocketDir    = "newtricks.ext.socket.dir"
	keyBlockToken   = "dfs.block.access.token.enable"
	keyAuth         = "hadoop.security.authentication"
)

// side is one daemon kind's co-process settings.
type side struct {
	name      string // "namenode", "datanode"
	binKey    string
	apiKey    string
	apiDef    string
	metKey    string
	metDef    string
	pluginKey string
	class     string
}

var (
	nnSide = side{"namenode", keyNNBinary, "newtricks.namenode.ext.api.address", "0.0.0.0:9880",
		"newtricks.namenode.ext.metrics.address", "127.0.0.1:9881", keyNNPlugins, NameNodePluginClass}
	dnSide = side{"datanode", keyDNBinary, "newtricks.datanode.ext.api.address", "0.0.0.0:9890",
		"newtricks.datanode.ext.metrics.address", "127.0.0.1:9891", keyDNPlugins, DataNodePluginClass}
)

func (d *doctor) checkConfig(ctx context.Context) {
	d.nnEnabled = slices.Contains(d.conf.List(keyNNPlugins), NameNodePluginClass)
	d.dnEnabled = slices.Contains(d.conf.List(keyDNPlugins), DataNodePluginClass)
	if !d.nnEnabled && !d.dnEnabled {
		d.r.fail("enabled", keyNNPlugins, "newtricks is not enabled: add %s to %s (NameNode) and/or %s to %s (DataNodes)",
			NameNodePluginClass, keyNNPlugins, DataNodePluginClass, keyDNPlugins)
	}
	d.binVersion = map[string]string{}
	for _, s := range []side{nnSide, dnSide} {
		enabled := d.nnEnabled
		if s.name == "datanode" {
			enabled = d.dnEnabled
		}
		d.checkSide(ctx, s, enabled)
	}
	if d.nnEnabled {
		d.checkAuditLoggers()
		d.checkEventJournal()
	}
	if d.dnEnabled {
		if v := strings.ToLower(d.conf.Get(keyBlockToken, "false")); v != "true" {
			d.r.fail("datanode.block-tokens", keyBlockToken,
				"%s is %q: datanode-ext serves a replica only after the DataNode verified the caller's block token; set it to true on the NameNode and every DataNode", keyBlockToken, v)
		} else {
			d.r.pass("datanode.block-tokens", keyBlockToken, "block access tokens are on")
		}
	}
	if d.nnEnabled || d.dnEnabled {
		if d.o.Remote {
			d.r.warn("host", "", "--remote: the co-process binaries, the socket dir and the hooks jar on the classpath are the daemons' hosts' and were not checked (run doctor there for those)")
		} else {
			d.checkSocketDir()
			d.checkJar()
			d.checkVersions()
		}
		d.checkSecurity()
	}
}

func (d *doctor) checkSide(ctx context.Context, s side, enabled bool) {
	bin, set := d.conf.Raw(s.binKey)
	check := s.name + ".binary"
	if !enabled {
		if set {
			d.r.warn(s.name+".plugin", s.pluginKey, "%s is set but %s does not list %s: the hook will not start %s-ext",
				s.binKey, s.pluginKey, s.class, s.name)
		}
		return
	}
	d.r.pass(s.name+".plugin", s.pluginKey, "%s lists %s", s.pluginKey, s.class)
	d.checkCoprocessConf(s)
	if !set || strings.TrimSpace(bin) == "" {
		d.r.fail(check, s.binKey, "%s is not set: the hook is loaded but launches no co-process", s.binKey)
	} else {
		bin = d.conf.Get(s.binKey, "")
		// From another host (Remote) the binary is not visible: the "host" finding says so.
		if !d.o.Remote && d.checkBinary(check, s.binKey, bin) {
			d.probeBinary(ctx, s, bin)
		}
	}
	for _, a := range []struct{ key, def, what string }{{s.apiKey, s.apiDef, "public API"}, {s.metKey, s.metDef, "metrics"}} {
		v := d.conf.Get(a.key, a.def)
		check := s.name + ".address"
		if v == "" {
			d.r.warn(check, a.key, "%s is empty: %s-ext's %s is off", a.key, s.name, a.what)
			continue
		}
		host, port, err := net.SplitHostPort(v)
		if err != nil {
			d.r.fail(check, a.key, "%s=%q is not host:port: %v", a.key, v, err)
			continue
		}
		if ip := net.ParseIP(host); a.what == "metrics" && (host == "" || (ip != nil && ip.IsUnspecified())) {
			d.r.warn(check, a.key, "%s=%s: /metrics is reachable from every network; bind it to loopback or a management address", a.key, v)
			continue
		}
		d.r.pass(check, a.key, "%s %s on %s (port %s)", s.name+"-ext", a.what, v, port)
	}
}

// checkBinary checks that path is an absolute, regular, executable file. It reports whether
// the binary is worth probing.
func (d *doctor) checkBinary(check, key, path string) bool {
	if !filepath.IsAbs(path) {
		d.r.fail(check, key, "%s=%q is not an absolute path (the daemon's working directory is not yours)", key, path)
		return false
	}
	fi, err := os.Stat(path)
	if err != nil {
		d.r.fail(check, key, "%s: %v", key, err)
		return false
	}
	if !fi.Mode().IsRegular() {
		d.r.fail(check, key, "%s=%s is not a regular file", key, path)
		return false
	}
	if fi.Mode().Perm()&0o111 == 0 || syscall.Access(path, 0x1 /* X_OK */) != nil {
		d.r.fail(check, key, "%s is not executable (mode %v): chmod 755 %s", path, fi.Mode().Perm(), path)
		return false
	}
	if fi.Mode().Perm()&0o002 != 0 {
		d.r.fail(check, key, "%s is writable by everyone (mode %v): anyone could replace what the daemon runs; chmod o-w %s",
			path, fi.Mode().Perm(), path)
		return false
	}
	if di, err := os.Stat(filepath.Dir(path)); err == nil && di.Mode().Perm()&0o002 != 0 && di.Mode()&os.ModeSticky == 0 {
		d.r.fail(check, key, "%s is in %s, which everyone may write to (mode %v): anyone could replace the binary; move it or chmod o-w %s",
			filepath.Base(path), filepath.Dir(path), di.Mode().Perm(), filepath.Dir(path))
		return false
	}
	d.r.pass(check, key, "%s is an executable file", path)
	return true
}

func (d *doctor) checkAuditLoggers() {
	loggers := d.conf.List(keyAuditLoggers)
	hasDefault := slices.Contains(loggers, "default")
	hasOurs := slices.Contains(loggers, AuditLoggerClass)
	switch {
	case len(loggers) > 0 && !hasDefault:
		d.r.fail("namenode.audit-loggers", keyAuditLoggers,
			"%s=%s drops Hadoop's own audit log; keep it first: default,%s", keyAuditLoggers, strings.Join(loggers, ","), AuditLoggerClass)
	case !hasOurs && d.reactiveHints():
		d.r.fail("namenode.audit-loggers", keyAuditLoggers,
			"newtricks.hotspot.reactive is on but %s does not list %s: reactive hints count opens, which only the audit logger sees; set default,%s",
			keyAuditLoggers, AuditLoggerClass, AuditLoggerClass)
	case !hasOurs:
		d.r.pass("namenode.audit-loggers", keyAuditLoggers,
			"%s does not list %s: fine while reactive hints are off (it costs each audited call a filter check)",
			keyAuditLoggers, AuditLoggerClass)
	default:
		d.r.pass("namenode.audit-loggers", keyAuditLoggers, "%s=%s", keyAuditLoggers, strings.Join(loggers, ","))
	}
}

// socketDir is the directory the hooks put their unix sockets in (HookConf.java).
func (d *doctor) socketDir() string {
	tmp := d.conf.Get("hadoop.tmp.dir", "/tmp/hadoop-${user.name}")
	return d.conf.Get(keySocketDir, tmp+"/newtricks")
}

// maxSocketDir leaves room in the 107 usable bytes of a unix socket path for go-plugin's
// per-process directory and socket name (plugin-dir/plugin0123456789).
const maxSocketDir = 107 - 40

func (d *doctor) checkSocketDir() {
	dir := d.socketDir()
	const check = "socket.dir"
	if len(dir) > maxSocketDir {
		d.r.fail(check, keySocketDir, "%s is %d bytes long: unix socket paths in it would exceed 107 bytes; use a path of at most %d",
			dir, len(dir), maxSocketDir)
		return
	}
	fi, err := os.Lstat(dir)
	if os.IsNotExist(err) {
		parent := filepath.Dir(dir)
		if _, err := os.Stat(parent); err != nil {
			d.r.warn(check, keySocketDir, "%s does not exist yet and neither does %s: the hook creates both (as %s) at start", dir, parent, d.o.User)
			return
		}
		d.r.pass(check, keySocketDir, "%s does not exist yet: the hook creates it with mode 0700", dir)
		return
	}
	if err != nil {
		d.r.fail(check, keySocketDir, "%s: %v", dir, err)
		return
	}
	if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
		d.r.fail(check, keySocketDir, "%s is not a real directory (a symlink or a file): the hook refuses it", dir)
		return
	}
	owner := ownerName(fi)
	if owner != d.o.User {
		d.r.fail(check, keySocketDir, "%s is owned by %s, not by %s (the daemon user): the hook refuses it; chown %s %s",
			dir, owner, d.o.User, d.o.User, dir)
		return
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		d.r.fail(check, keySocketDir, "%s has mode %04o: anyone in its group or others could reach the host service; chmod 700 %s",
			dir, perm, dir)
		return
	}
	d.r.pass(check, keySocketDir, "%s: owner %s, mode 0700", dir, owner)
}

func (d *doctor) checkSecurity() {
	auth := strings.ToLower(d.conf.Get(keyAuth, "simple"))
	switch auth {
	case "simple":
		d.r.warn("security", keyAuth, "%s=simple: HDFS trusts the user name a client claims, and so do the newtricks APIs; fine on a closed network only", keyAuth)
	case "kerberos":
		if strings.ToLower(d.conf.Get(keyBlockToken, "false")) != "true" {
			d.r.fail("security", keyBlockToken, "Kerberos is on but %s is not true: set it on every daemon", keyBlockToken)
			return
		}
		// Each enabled co-process needs its own principal, keytab and TLS material, or it
		// refuses to open its API (authn.Config).
		for _, co := range []struct{ prefix, binKey string }{
			{"newtricks.namenode.ext", keyNNBinary}, {"newtricks.datanode.ext", keyDNBinary}} {
			if _, ok := d.conf.Raw(co.binKey); !ok {
				continue
			}
			cfg := authn.ConfigFrom(func(k string) string { return d.conf.Get(k, "") }, co.prefix)
			if key, err := cfg.Check(co.prefix, ""); err != nil {
				d.r.fail("security", key, "%v", err)
				return
			}
		}
		d.r.pass("security", keyAuth, "%s=kerberos with block access tokens; the co-processes' keytabs and TLS material load", keyAuth)
	default:
		d.r.fail("security", keyAuth, "%s=%q: Hadoop knows simple and kerberos", keyAuth, auth)
	}
}

func (d *doctor) checkVersions() {
	if d.jarVersion == "" || len(d.binVersion) == 0 {
		return
	}
	jar := strings.TrimSuffix(d.jarVersion, "-SNAPSHOT")
	skew := []string{}
	for name, v := range d.binVersion {
		if v != jar {
			skew = append(skew, fmt.Sprintf("%s %s", name, v))
		}
	}
	slices.Sort(skew)
	if len(skew) > 0 {
		d.r.warn("versions", "", "hooks jar is %s but %s: deploy the jar and the binaries of one release together",
			d.jarVersion, strings.Join(skew, ", "))
		return
	}
	d.r.pass("versions", "", "hooks jar %s matches the binaries", d.jarVersion)
}

// reactiveHints reports whether hotspot will make implicit hints from audited opens (as
// namenode-ext parses newtricks.hotspot.reactive).
func (d *doctor) reactiveHints() bool {
	cfg, err := hotspot.ConfigFromMap(d.configureMap())
	return err == nil && cfg.Reactive
}
