package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"
)

// ErrNoMiniKdc means the MiniKdc jars are missing (run `make minikdc`).
var ErrNoMiniKdc = errors.New("minikdc jars not found")

// Realm is the MiniKdc's realm (its org.name.org.domain defaults).
const Realm = "EXAMPLE.COM"

// DefaultMiniKdcLib is where `make minikdc` puts the KDC's jars: $NEWTRICKS_MINIKDC_LIB if
// set (`make test` sets it), else DefaultCacheDir()/minikdc-<HadoopVersion>/lib.
func DefaultMiniKdcLib() string {
	if d := os.Getenv("NEWTRICKS_MINIKDC_LIB"); d != "" {
		return d
	}
	return filepath.Join(DefaultCacheDir(), "minikdc-"+HadoopVersion, "lib")
}

// KDC is a running Hadoop MiniKdc (Apache Kerby) in its own process, with a keytab per
// principal under Dir/keytabs.
type KDC struct {
	// Dir holds krb5.conf, the keytabs and the KDC's log.
	Dir string
	// Krb5Conf is the krb5.conf the daemons (-Djava.security.krb5.conf) and gokrb5 clients use.
	Krb5Conf string
	// Addr is the KDC's TCP address, "localhost:<port>".
	Addr string
	proc *process
	sp   *spawner
}

var kdcPortRE = regexp.MustCompile(`kdc\s*=\s*([^\s:]+):(\d+)`)

// StartKDC starts a MiniKdc in dir (its previous content is replaced), creates principals
// (e.g. "alice", "hdfs/localhost") and writes one keytab per principal. java and lib default
// to "java" and DefaultMiniKdcLib(). With detached the KDC outlives this process (the CLI);
// stop it with StopKDC.
func StartKDC(ctx context.Context, dir, java, lib string, detached bool, principals ...string) (*KDC, error) {
	if java == "" {
		java = "java"
	}
	if lib == "" {
		lib = DefaultMiniKdcLib()
	}
	if m, _ := filepath.Glob(filepath.Join(lib, "hadoop-minikdc-*.jar")); len(m) == 0 {
		return nil, fmt.Errorf("%w in %s (run `make minikdc`)", ErrNoMiniKdc, lib)
	}
	dir = absPath(dir)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "keytabs"), 0o700); err != nil {
		return nil, err
	}
	props := filepath.Join(dir, "minikdc.properties")
	// Port 0: the KDC picks a free one and writes it into krb5.conf.
	if err := os.WriteFile(props, []byte("kdc.port=0\nmax.ticket.lifetime=86400000\n"), 0o600); err != nil {
		return nil, err
	}
	all := filepath.Join(dir, "all.keytab")
	args := append([]string{"-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", filepath.Join(lib, "*"),
		"org.apache.hadoop.minikdc.MiniKdc", dir, props, all}, principals...)
	cmd := exec.Command(java, args...)
	cmd.Dir = dir
	k := &KDC{Dir: dir, Krb5Conf: filepath.Join(dir, "krb5.conf")}
	if !detached {
		k.sp = newSpawner()
	}
	p, err := startProcess(k.sp, "kdc", cmd, filepath.Join(dir, "kdc.log"), dir+string(filepath.Separator))
	if err != nil {
		k.close()
		return nil, err
	}
	k.proc = p
	if err := os.WriteFile(filepath.Join(dir, "kdc.pid"), []byte(strconv.Itoa(p.pid)+"\n"), 0o600); err != nil {
		k.Stop()
		return nil, err
	}
	// MiniKdc prints "Standalone MiniKdc Running" after krb5.conf and the keytab exist.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if !p.running() {
			k.Stop()
			return nil, fmt.Errorf("minikdc: %w\n%s", ErrDaemonExited, tail(p.logSince(), 30))
		}
		if strings.Contains(p.logSince(), "Standalone MiniKdc Running") {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			k.Stop()
			return nil, fmt.Errorf("minikdc did not start within 60s\n%s", tail(p.logSince(), 30))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := k.finish(all, principals); err != nil {
		k.Stop()
		return nil, err
	}
	return k, nil
}

// finish reads the KDC's port and writes krb5.conf for both Java and gokrb5 and one keytab
// per principal.
func (k *KDC) finish(all string, principals []string) error {
	generated, err := os.ReadFile(k.Krb5Conf)
	if err != nil {
		return fmt.Errorf("minikdc krb5.conf: %w", err)
	}
	m := kdcPortRE.FindSubmatch(generated)
	if m == nil {
		return fmt.Errorf("minikdc krb5.conf names no kdc:\n%s", generated)
	}
	k.Addr = string(m[1]) + ":" + string(m[2])
	// Our own krb5.conf: TCP only (the KDC has no UDP), no DNS, no reverse lookups, renewable
	// tickets; both the JDK and gokrb5 read it.
	conf := fmt.Sprintf(`[libdefaults]
    default_realm = %[1]s
    udp_preference_limit = 1
    dns_lookup_kdc = false
    dns_lookup_realm = false
    rdns = false
    dns_canonicalize_hostname = false
    ticket_lifetime = 24h
    renew_lifetime = 7d
    forwardable = true

[realms]
    %[1]s = {
        kdc = %[2]s
    }

[domain_realm]
    localhost = %[1]s
    .localhost = %[1]s
`, Realm, k.Addr)
	if err := os.WriteFile(k.Krb5Conf, []byte(conf), 0o644); err != nil {
		return err
	}
	kt, err := keytab.Load(all)
	if err != nil {
		return fmt.Errorf("minikdc keytab: %w", err)
	}
	for _, p := range principals {
		one := keytab.New()
		for _, e := range kt.Entries {
			if strings.Join(e.Principal.Components, "/") == p {
				one.Entries = append(one.Entries, e)
			}
		}
		if len(one.Entries) == 0 {
			return fmt.Errorf("minikdc keytab has no key for %s", p)
		}
		b, err := one.Marshal()
		if err != nil {
			return err
		}
		if err := os.WriteFile(k.Keytab(p), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Keytab is the path of principal's own keytab (principal without realm, "hdfs/localhost").
func (k *KDC) Keytab(principal string) string {
	return filepath.Join(k.Dir, "keytabs", strings.ReplaceAll(principal, "/", "_")+".keytab")
}

// Principal returns principal with the realm appended.
func (k *KDC) Principal(principal string) string { return principal + "@" + Realm }

// Running reports whether the KDC process is alive.
func (k *KDC) Running() bool { return k.proc.running() }

// Stop kills the KDC and waits until it is gone. Idempotent.
func (k *KDC) Stop() error {
	k.proc.kill()
	k.close()
	_ = os.Remove(filepath.Join(k.Dir, "kdc.pid"))
	if k.proc.running() {
		return fmt.Errorf("minikdc pid %d still alive", k.proc.pid)
	}
	return nil
}

func (k *KDC) close() {
	if k.sp != nil {
		k.sp.close()
		k.sp = nil
	}
}

// StopKDC stops a (detached) KDC started in dir, found by its pid file. No KDC is no error.
func StopKDC(dir string) error {
	dir = absPath(dir)
	f, err := os.Open(filepath.Join(dir, "kdc.pid"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	s := bufio.NewScanner(f)
	s.Scan()
	f.Close()
	pid, err := strconv.Atoi(strings.TrimSpace(s.Text()))
	if err != nil {
		return fmt.Errorf("kdc.pid in %s: %w", dir, err)
	}
	p := &process{daemon: "kdc", pid: pid, marker: dir + string(filepath.Separator)}
	k := &KDC{Dir: dir, proc: p}
	return k.Stop()
}
