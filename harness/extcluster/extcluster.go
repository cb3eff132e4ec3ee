// Package extcluster starts real clusters with the newtricks hooks enabled, for conformance
// tests, benchmarks and the demo: it wires the hooks jar and the Go binaries into a
// cluster.Config, gives every co-process its own API and metrics port, and dials them.
package extcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/harness/cluster"
	"github.com/newtricks/newtricks/internal/siteconf"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Hook class names and the keys that enable them (see BUILDING.md).
const (
	NameNodePluginClass = "io.newtricks.hadoop.NameNodePlugin"
	DataNodePluginClass = "io.newtricks.hadoop.DataNodePlugin"
	AuditLoggerClass    = "io.newtricks.hadoop.AuditForwarder"
	EventJournalClass   = "io.newtricks.hadoop.EventJournal"
)

// ErrMissing is returned when a built artifact the hooks need is absent.
var ErrMissing = errors.New("newtricks artifact missing")

// Artifacts are the built parts of newtricks.
type Artifacts struct {
	HooksJar     string // hadoop-patches/target/newtricks-hadoop-hooks.jar
	NameNodeExt  string // bin/namenode-ext
	DataNodeExt  string // bin/datanode-ext
	NewtricksCLI string // bin/newtricks
	HadoopLibDir string
}

// ArtifactsFromEnv reads NEWTRICKS_HOOKS_JAR, NEWTRICKS_BIN and NEWTRICKS_HADOOP_LIB (set by
// `make test`) and checks that every file exists.
func ArtifactsFromEnv() (Artifacts, error) {
	bin := os.Getenv("NEWTRICKS_BIN")
	a := Artifacts{
		HooksJar:     os.Getenv("NEWTRICKS_HOOKS_JAR"),
		NameNodeExt:  filepath.Join(bin, "namenode-ext"),
		DataNodeExt:  filepath.Join(bin, "datanode-ext"),
		NewtricksCLI: filepath.Join(bin, "newtricks"),
		HadoopLibDir: os.Getenv("NEWTRICKS_HADOOP_LIB"),
	}
	if bin == "" || a.HooksJar == "" {
		return a, fmt.Errorf("%w: NEWTRICKS_BIN and NEWTRICKS_HOOKS_JAR must be set (make test sets them)", ErrMissing)
	}
	for _, f := range []string{a.HooksJar, a.NameNodeExt, a.DataNodeExt} {
		if _, err := os.Stat(f); err != nil {
			return a, fmt.Errorf("%w: %v (run make jar build)", ErrMissing, err)
		}
	}
	return a, nil
}

// Options change what Setup enables.
type Options struct {
	Name      string
	DataNodes int
	// NameNodeExt and DataNodeExt override the co-process binaries (a missing path or a
	// misbehaving binary, for fault tests). Empty: the built ones.
	NameNodeExt, DataNodeExt string
	// NoHooks starts a plain cluster (the baseline of overhead tests).
	NoHooks bool
	// InotifyEvents leaves the event journal out of dfs.namenode.edits.dir, so the hook polls
	// the edit log for namespace events (the fallback) instead of streaming them.
	InotifyEvents bool
	// HA makes the cluster an HA nameservice (cluster.HAConfig): the hooks run on both
	// NameNodes, each with its own namenode-ext on its own API and metrics ports
	// (Layout.NameNodeAPIs) and its own co-process log dir.
	HA *cluster.HAConfig
	// HDFSSite, NameNodeSite and DataNodeSite are merged over what Setup sets.
	HDFSSite     map[string]string
	NameNodeSite map[string]string
	DataNodeSite func(i int) map[string]string
}

// Layout is where a Setup cluster's co-processes listen.
type Layout struct {
	// NameNodeAPI and NameNodeMetrics are namenode-ext's addresses (with HA, NameNode 0's).
	NameNodeAPI     string
	NameNodeMetrics string
	// NameNodeAPIs and NameNodeMetricsAddrs are every NameNode's namenode-ext, by NameNode
	// index (one entry without HA).
	NameNodeAPIs         []string `json:",omitempty"`
	NameNodeMetricsAddrs []string `json:",omitempty"`
	DataNodeAPI          []string
	DataNodeMetrics      []string
	SocketDir            string
}

// Setup builds the cluster.Config for a cluster with the hooks enabled under baseDir.
func Setup(a Artifacts, baseDir string, o Options) (cluster.Config, Layout, error) {
	n := o.DataNodes
	if n == 0 {
		n = 3
	}
	nns := 1
	if o.HA != nil {
		nns = 2
	}
	ports, err := cluster.FreePorts(2*nns + 2*n)
	if err != nil {
		return cluster.Config{}, Layout{}, err
	}
	// Unix socket paths are limited to 108 bytes: keep the socket dir short.
	sock, err := os.MkdirTemp("", "nt-sock-")
	if err != nil {
		return cluster.Config{}, Layout{}, err
	}
	lay := Layout{SocketDir: sock}
	for i := 0; i < nns; i++ {
		lay.NameNodeAPIs = append(lay.NameNodeAPIs, "127.0.0.1:"+strconv.Itoa(ports[2*i]))
		lay.NameNodeMetricsAddrs = append(lay.NameNodeMetricsAddrs, "127.0.0.1:"+strconv.Itoa(ports[2*i+1]))
	}
	lay.NameNodeAPI, lay.NameNodeMetrics = lay.NameNodeAPIs[0], lay.NameNodeMetricsAddrs[0]
	dnPorts := ports[2*nns:]
	for i := 0; i < n; i++ {
		lay.DataNodeAPI = append(lay.DataNodeAPI, "127.0.0.1:"+strconv.Itoa(dnPorts[2*i]))
		lay.DataNodeMetrics = append(lay.DataNodeMetrics, "127.0.0.1:"+strconv.Itoa(dnPorts[2*i+1]))
	}
	nnExt, dnExt := a.NameNodeExt, a.DataNodeExt
	if o.NameNodeExt != "" {
		nnExt = o.NameNodeExt
	}
	if o.DataNodeExt != "" {
		dnExt = o.DataNodeExt
	}
	hdfs := map[string]string{}
	nnSite := map[string]string{}
	if !o.NoHooks {
		hdfs["newtricks.ext.socket.dir"] = sock
		hdfs["newtricks.ext.log.dir"] = filepath.Join(baseDir, "ext-logs")
		nnSite["dfs.namenode.plugins"] = NameNodePluginClass
		nnSite["dfs.namenode.audit.loggers"] = "default," + AuditLoggerClass
		nnSite["newtricks.namenode.ext.binary"] = nnExt
		if o.HA == nil {
			nnSite["newtricks.namenode.ext.api.address"] = lay.NameNodeAPI
			nnSite["newtricks.namenode.ext.metrics.address"] = lay.NameNodeMetrics
		}
		if !o.InotifyEvents {
			for k, v := range EventJournalSite() {
				nnSite[k] = v
			}
		}
	}
	for k, v := range o.HDFSSite {
		hdfs[k] = v
	}
	for k, v := range o.NameNodeSite {
		nnSite[k] = v
	}
	cfg := cluster.Config{
		Name:         o.Name,
		DataNodes:    n,
		BaseDir:      baseDir,
		HadoopLib:    a.HadoopLibDir,
		HDFSSite:     hdfs,
		NameNodeSite: nnSite,
		HA:           o.HA,
		DataNodeSite: func(i int) map[string]string {
			m := map[string]string{}
			if !o.NoHooks {
				m["dfs.datanode.plugins"] = DataNodePluginClass
				m["newtricks.datanode.ext.binary"] = dnExt
				m["newtricks.datanode.ext.api.address"] = lay.DataNodeAPI[i]
				m["newtricks.datanode.ext.metrics.address"] = lay.DataNodeMetrics[i]
				// Offload locates datasets and finds the other DataNodes through namenode-ext
				// (an HA pair: both, the standby's answers UNAVAILABLE and the client moves on).
				m["newtricks.datanode.ext.namenode.api"] = lay.NameNodeAPI
				if len(lay.NameNodeAPIs) > 1 {
					m["newtricks.datanode.ext.namenode.api"] = strings.Join(lay.NameNodeAPIs, ",")
				}
				// DataNodes share a host here: give each co-process log its own dir.
				m["newtricks.ext.log.dir"] = filepath.Join(baseDir, "ext-logs", "datanode-"+strconv.Itoa(i))
			}
			if o.DataNodeSite != nil {
				for k, v := range o.DataNodeSite(i) {
					m[k] = v
				}
			}
			return m
		},
	}
	if o.HA != nil && !o.NoHooks {
		// Clients of the nameservice (ClientConfDir, every daemon's hdfs-site) find each
		// NameNode's namenode-ext by its HA id, as Hadoop's per-NameNode rpc-address keys.
		ns := o.HA.Nameservice
		if ns == "" {
			ns = cluster.DefaultNameservice
		}
		for i, a := range lay.NameNodeAPIs {
			if _, set := cfg.HDFSSite[siteconf.KeyAPI+"."+ns+"."+cluster.HANameNodeID(i)]; !set {
				cfg.HDFSSite[siteconf.KeyAPI+"."+ns+"."+cluster.HANameNodeID(i)] = a
			}
		}
		// Both NameNodes run on this host: each namenode-ext gets its own ports and log dir.
		cfg.NameNodeSiteFor = func(i int) map[string]string {
			return map[string]string{
				"newtricks.namenode.ext.api.address":     lay.NameNodeAPIs[i],
				"newtricks.namenode.ext.metrics.address": lay.NameNodeMetricsAddrs[i],
				"newtricks.ext.log.dir":                  filepath.Join(baseDir, "ext-logs", "namenode-"+strconv.Itoa(i)),
			}
		}
	}
	if !o.NoHooks {
		cfg.ExtraClasspath = []string{a.HooksJar}
	}
	return cfg, lay, nil
}

// EventJournalSite are the NameNode keys that add the event journal (BUILDING.md) next to the
// NameNode's own edits directory.
func EventJournalSite() map[string]string {
	return map[string]string{
		"dfs.namenode.edits.journal-plugin.newtricks": EventJournalClass,
		"dfs.namenode.edits.dir":                      "${dfs.namenode.name.dir},newtricks:///events",
	}
}

// Dial connects to a co-process API address. Reconnects are retried every 50-250 ms, not
// with gRPC's default backoff (up to 2 minutes), so a co-process that starts or restarts is
// seen as soon as it listens.
func Dial(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(128<<20)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 250 * time.Millisecond},
			MinConnectTimeout: time.Second,
		}))
}

// WaitServing polls a co-process's public API until it answers a health probe (a Status-like
// call is not public, so the caller passes the probe), or ctx ends.
func WaitServing(ctx context.Context, probe func(context.Context) error) error {
	var last error
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		last = probe(cctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not serving: %w (last error: %v)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitDirectory waits until namenode-ext's DataNodeDirectory lists n datanode-ext endpoints
// (each registers itself a moment after it serves), or ctx ends; a namenode-ext without the
// directory fails at once.
func WaitDirectory(ctx context.Context, cc grpc.ClientConnInterface, user string, n int) error {
	c := pb.NewDataNodeDirectoryClient(cc)
	var unimplemented error
	err := WaitServing(ctx, func(ctx context.Context) error {
		if unimplemented != nil {
			return nil
		}
		resp, err := c.List(ctx, &pb.ListDataNodeExtsRequest{User: user})
		if status.Code(err) == codes.Unimplemented {
			unimplemented = err
			return nil
		}
		if err != nil {
			return err
		}
		if len(resp.GetNodes()) < n {
			return fmt.Errorf("the directory lists %d of %d datanode-ext", len(resp.GetNodes()), n)
		}
		return nil
	})
	if unimplemented != nil {
		return fmt.Errorf("namenode-ext has no DataNodeDirectory (an older build?): %w", unimplemented)
	}
	return err
}

// NamespaceClient dials namenode-ext's public API.
func NamespaceClient(lay Layout) (pb.NamespaceClient, *grpc.ClientConn, error) {
	cc, err := Dial(lay.NameNodeAPI)
	if err != nil {
		return nil, nil, err
	}
	return pb.NewNamespaceClient(cc), cc, nil
}
