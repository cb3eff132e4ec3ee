package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/newtricks/newtricks/cmd/newtricks/doctor"
)

func init() {
	register("doctor", command{
		summary: "check a Hadoop conf dir and the running cluster for a working newtricks setup",
		run:     runDoctor,
	})
}

const doctorUsage = `usage:
  newtricks doctor --conf DIR [--user U] [--classpath CP] [--namenode-http HOST:PORT]
                   [--metrics HOST:PORT ...] [--ca PEM ...] [--offline | --remote] [--timeout 10s] [--json]

Checks what an admin must get right to run newtricks, and prints one line per finding:
PASS, WARN or FAIL, what was found, and in brackets the hdfs-site key to change.

  configuration  hook classes in dfs.namenode.plugins / dfs.datanode.plugins, the audit-logger
                 list (keeps 'default'), the event journal (plugin class, not required), binary keys, API and metrics addresses, block access
                 tokens for datanode-ext, the authentication mode, and every newtricks.* value
                 through the co-processes' own parsers (hotspot, mirror, offload, ...)
  this host      each co-process binary exists, is executable, finds its shared libraries
                 (FFmpeg) and answers the go-plugin handshake; the socket dir is owned by the
                 daemon user with mode 0700; the hooks jar is on the classpath once, and its
                 version matches the binaries'
  the cluster    (unless --offline) the NameNode answers and is out of safe mode, DataNodes
                 are live, every daemon loaded its hook and reports its co-process healthy
                 (JMX), no audit events were dropped, the daemons run with this conf's
                 settings (/conf: security keys must agree, newtricks keys may await a
                 restart), each co-process's /metrics answers,
                 the mirror's destination NameNode accepts connections

--conf is the directory holding hdfs-site.xml (and core-site.xml) as the daemons read it.
--user is the daemons' user (default: you; run doctor as that user for the binary checks).
--classpath is the daemons' classpath (default: $HADOOP_CLASSPATH and $HADOOP_HOME's jars),
e.g. --classpath "$(hadoop classpath)". --namenode-http defaults to dfs.namenode.http-address.
--metrics adds co-process /metrics addresses (datanode-ext's, say) to scrape. HTTPS-only
daemons (dfs.http.policy=HTTPS_ONLY) are read over HTTPS, trusting the system's CAs and --ca;
doctor does not speak SPNEGO, so on a Kerberized cluster /jmx must be whitelisted for it
(hadoop.http.authentication.kerberos.endpoint.whitelist) or run it with --offline.
--remote runs from another host than the daemon's (a client or the conformance kit): the
binaries, socket dir and jar are not checked, nor metrics on the daemon's loopback.
Exit status: 0 when nothing failed (warnings allowed), 1 when a check failed, 2 for bad usage.
`

func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("newtricks doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, doctorUsage) }
	var o doctor.Options
	var metrics, cas listFlag
	var cp string
	fs.StringVar(&o.ConfDir, "conf", "", "Hadoop conf `dir` (holds hdfs-site.xml)")
	fs.StringVar(&o.User, "user", "", "the daemons' user (default: the current user)")
	fs.StringVar(&cp, "classpath", "", "the daemons' classpath (colon-separated; dir/* allowed)")
	fs.StringVar(&o.NameNodeHTTP, "namenode-http", "", "NameNode web `host:port` (default: dfs.namenode.http-address)")
	fs.Var(&cas, "ca", "a PEM `file` of CA certificates to trust for HTTPS web endpoints (repeatable)")
	fs.Var(&metrics, "metrics", "a co-process metrics `host:port` to scrape (repeatable)")
	fs.BoolVar(&o.Offline, "offline", false, "check the configuration and this host only, not the running cluster")
	fs.BoolVar(&o.Remote, "remote", false, "this host is not the daemon's: skip the checks of its binaries, socket dir and jar, and its loopback metrics")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Second, "bound on each network call and binary probe")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if o.ConfDir == "" {
		return usagef("--conf is required (the directory holding hdfs-site.xml)")
	}
	if cp != "" {
		o.Classpath = filepath.SplitList(cp)
	}
	o.Metrics = metrics
	o.CAFiles = cas
	r, err := doctor.Run(ctx, o)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := printJSON(stdout, r); err != nil {
			return err
		}
	} else {
		doctor.Print(stdout, r)
	}
	if !r.OK() {
		return errSilent
	}
	return nil
}
