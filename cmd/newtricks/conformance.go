package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/newtricks/newtricks/conformance/kit"
	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/harness/extcluster"
)

func init() {
	register("conformance", command{
		summary: "run the conformance kit against a running cluster (--conf DIR | --cluster FILE | --name NAME)",
		run:     runConformance,
	})
}

const conformanceUsage = `usage:
  newtricks conformance --conf DIR [--conf DIR ...]   a cluster named by its Hadoop conf dirs
  newtricks conformance --cluster FILE                a cluster described in JSON
  newtricks conformance --name NAME [--dir DIR]       a cluster started by 'newtricks cluster up' on this host
      [--superuser U] [--user kituser] [--other kitother] [--root /tmp/newtricks-kit]
      [--run REGEX] [--wait 0s] [--wait-only] [--datanodes N] [--list] [--json]

Runs the conformance kit (conformance/kit) against a running simple-auth cluster: hints raise
a factor and restore it, namespace events arrive, offload returns the bytes the reader makes
locally, another user is denied, and 'newtricks doctor' finds nothing to fail. The kit works
in ROOT/<run id> (made by the superuser, owned by --user, removed at the end) and ends the
hints it made: it may run against a staging cluster. Cases that inject faults (kill a
co-process) run only with --name, where this host runs the daemons; otherwise they are
skipped with the reason.

--conf reads fs.defaultFS, dfs.namenode.http-address and the newtricks.*.ext.api.address keys
(an address without a host is the NameNode's; DataNode APIs are every live DataNode's host
with the port of newtricks.datanode.ext.api.address); give the NameNode's conf dir first and
a DataNode's after it to have doctor check both. Doctor runs with --remote: this host is not
the daemons'. --cluster FILE is a kit.Cluster in JSON:
  {"namenode": "nn:8020", "namenode_http": "nn:9870", "namenode_api": "nn:9880",
   "datanode_apis": ["dn1:9890", ...], "superuser": "hdfs", "root": "/tmp/newtricks-kit",
   "doctor": [{"conf_dir": "/etc/hadoop/conf"}]}
--superuser defaults to the owner of /. ROOT must lie under newtricks.hotspot.allowed-prefixes.
--wait waits up to that long for the cluster to be healthy before the cases (NameNode out of
safe mode with --datanodes live DataNodes, namenode-ext and every datanode-ext answering);
--wait-only stops there. --run runs only the cases whose name matches (spaces are '_').
Exit status: 0 when no case failed (skips allowed), 1 when one did, 2 for bad usage.
`

func runConformance(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("newtricks conformance", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var confs listFlag
	fs.Var(&confs, "conf", "Hadoop conf `dir` (repeatable: the NameNode's first)")
	file := fs.String("cluster", "", "cluster description `file` (JSON)")
	name := fs.String("name", "", "a cluster started by 'newtricks cluster up'")
	dir := fs.String("dir", "", "its base directory (default $NEWTRICKS_CACHE/clusters/NAME)")
	su := fs.String("superuser", "", "the HDFS superuser (default: the owner of /)")
	user := fs.String("user", "", "the ordinary user the kit acts as (default kituser)")
	other := fs.String("other", "", "the user who must be denied (default kitother)")
	root := fs.String("root", "", "HDFS directory to work in (default /tmp/newtricks-kit)")
	runRE := fs.String("run", "", "run only the cases matching this `regexp`")
	wait := fs.Duration("wait", 0, "wait up to this long for the cluster to be healthy first")
	waitOnly := fs.Bool("wait-only", false, "only wait until the cluster is healthy")
	dns := fs.Int("datanodes", 0, "live DataNodes --wait wants (default: as many as the description lists, at least 1)")
	list := fs.Bool("list", false, "list the cases and exit")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, conformanceUsage)
			return nil
		}
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *list {
		for _, c := range kit.Cases() {
			fault := ""
			if c.Fault != "" {
				fault = "  (fault injection: " + c.Fault + ")"
			}
			fmt.Fprintf(stdout, "%s%s\n", c.Name, fault)
		}
		return nil
	}
	var filter *regexp.Regexp
	if *runRE != "" {
		var err error
		if filter, err = regexp.Compile(*runRE); err != nil {
			return usagef("--run: %v", err)
		}
	}
	n := 0
	for _, set := range []bool{len(confs) > 0, *file != "", *name != "" || *dir != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return usagef("name the cluster one way: --conf DIR, --cluster FILE or --name NAME")
	}
	var c kit.Cluster
	var err error
	switch {
	case len(confs) > 0:
		c, err = kit.FromConf(confs...)
	case *file != "":
		c, err = kit.Load(*file)
	default:
		c, err = harnessCluster(*name, *dir)
	}
	if err != nil {
		return err
	}
	for _, o := range []struct {
		dst *string
		v   string
	}{{&c.Superuser, *su}, {&c.User, *user}, {&c.Other, *other}, {&c.Root, *root}} {
		if o.v != "" {
			*o.dst = o.v
		}
	}
	if *wait > 0 || *waitOnly {
		within := *wait
		if within == 0 {
			within = 2 * time.Minute
		}
		fmt.Fprintf(stderr, "waiting up to %v for cluster %s to be healthy\n", within, c.NameNode)
		start := time.Now()
		h, err := kit.WaitHealthy(ctx, &c, *dns, within)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "cluster %s healthy after %.1fs: %d live DataNodes, datanode-ext at %s\n", c.NameNode,
			time.Since(start).Seconds(), h.LiveDataNodes, strings.Join(c.DataNodeAPIs, " "))
		if *waitOnly {
			return nil
		}
	}
	out := stdout
	if *asJSON {
		out = stderr
	}
	res := kit.RunStandalone(out, c, filter)
	if *asJSON {
		if err := printJSON(stdout, res); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "conformance kit on %s: %d passed, %d skipped, %d failed\n", c.Name, res.Pass, res.Skip, res.Fail)
	if !res.OK() {
		return errSilent
	}
	return nil
}

// harnessCluster attaches the cluster `newtricks cluster up` started (it must have the hooks:
// --jar) and describes it to the kit, fault injection included.
func harnessCluster(name, dir string) (kit.Cluster, error) {
	if name == "" {
		name = "dc-a"
	}
	if dir == "" {
		dir = filepath.Join(cluster.DefaultCacheDir(), "clusters", name)
	}
	c, err := cluster.Attach(dir)
	if err != nil {
		return kit.Cluster{}, fmt.Errorf("cluster %s: %w (start it with newtricks cluster up --name %s --jar ...)", name, err, name)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ext.json"))
	if err != nil {
		return kit.Cluster{}, fmt.Errorf("cluster %s has no newtricks hooks (%v): start it with --jar", name, err)
	}
	var lay extcluster.Layout
	if err := json.Unmarshal(b, &lay); err != nil {
		return kit.Cluster{}, fmt.Errorf("%s: %w", filepath.Join(dir, "ext.json"), err)
	}
	st := c.State()
	var cp []string
	if st.Launch.HadoopLib != "" {
		cp = append(cp, filepath.Join(st.Launch.HadoopLib, "*"))
	}
	cp = append(cp, st.Launch.ExtraClasspath...)
	return kit.FromHarness(c, lay, cp), nil
}
