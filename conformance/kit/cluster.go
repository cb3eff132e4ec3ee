package kit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/newtricks/newtricks/cmd/newtricks/doctor"
)

// Cluster names a running newtricks cluster by its addresses: whatever started it (the
// harness, `newtricks cluster up`, docker-compose, an admin's deployment). Only NameNode and
// NameNodeAPI are required; the rest is found from the NameNode when empty.
type Cluster struct {
	// Name is shown in the output.
	Name string `json:"name,omitempty"`
	// NameNode is the HDFS RPC address (host:port), fs.defaultFS without the scheme.
	NameNode string `json:"namenode"`
	// NameNodeHTTP is the NameNode's web address (JMX, /conf). Empty: NameNode's host, 9870.
	NameNodeHTTP string `json:"namenode_http,omitempty"`
	// NameNodeAPI is namenode-ext's public API (hints, events, locate).
	NameNodeAPI string `json:"namenode_api"`
	// DataNodeAPIs are the datanode-ext public APIs (offload). Empty: every live DataNode's
	// host (from the NameNode) with DataNodeAPIPort.
	DataNodeAPIs []string `json:"datanode_apis,omitempty"`
	// DataNodeAPIPort is the port of newtricks.datanode.ext.api.address (default 9890), used
	// only to find DataNodeAPIs.
	DataNodeAPIPort int `json:"datanode_api_port,omitempty"`
	// Superuser is the HDFS superuser (the NameNode's OS user). Empty: the owner of "/".
	Superuser string `json:"superuser,omitempty"`
	// User and Other are the ordinary users the kit acts as (simple authentication: just
	// names). Defaults "kituser" and "kitother". The kit makes a home for User under Root as
	// the superuser and removes it at the end.
	User  string `json:"user,omitempty"`
	Other string `json:"other,omitempty"`
	// Root is the HDFS directory the kit works in (default /tmp/newtricks-kit); it must lie
	// under newtricks.hotspot.allowed-prefixes. The kit makes Root/<run id> and removes it.
	Root string `json:"root,omitempty"`
	// Doctor lists the conf dirs `newtricks doctor` checks (one per kind of daemon), each as
	// the daemons read it. Empty: the doctor case is skipped.
	Doctor []DoctorTarget `json:"doctor,omitempty"`
	// Faults, when the engine can inject them, lets the fault cases run. Not in JSON.
	Faults Faults `json:"-"`
}

// DoctorTarget is one `newtricks doctor` run of the doctor case.
type DoctorTarget struct {
	ConfDir string `json:"conf_dir"`
	// Local: the kit runs on this daemon's host, with its binaries and socket dir; doctor's
	// checks of files on the host apply. Otherwise doctor runs with Remote set.
	Local bool `json:"local,omitempty"`
	// Classpath is the daemons' classpath (for the jar check, when Local).
	Classpath []string `json:"classpath,omitempty"`
	// Metrics are co-process /metrics addresses reachable from the kit.
	Metrics []string `json:"metrics,omitempty"`
}

// Faults is what an engine that controls the daemons offers the fault-injection cases. A
// cluster named by addresses has none: those cases skip and say why.
type Faults interface {
	// KillCoprocess SIGKILLs the co-process of daemon ("namenode" or "datanode-<i>", i in
	// DataNodeAPIs order) and returns once it is dead; its hook restarts it.
	KillCoprocess(ctx context.Context, daemon string) error
}

// Load reads a cluster description: a JSON file (a Cluster), or a Hadoop conf dir, or several
// conf dirs separated by commas (FromConf).
func Load(spec string) (Cluster, error) {
	var dirs []string
	for _, p := range strings.Split(spec, ",") {
		if p = strings.TrimSpace(p); p != "" {
			dirs = append(dirs, p)
		}
	}
	if len(dirs) == 1 {
		if fi, err := os.Stat(dirs[0]); err == nil && !fi.IsDir() {
			b, err := os.ReadFile(dirs[0])
			if err != nil {
				return Cluster{}, err
			}
			var c Cluster
			if err := json.Unmarshal(b, &c); err != nil {
				return Cluster{}, fmt.Errorf("cluster description %s: %w", dirs[0], err)
			}
			return c, c.check()
		}
	}
	return FromConf(dirs...)
}

func (c Cluster) check() error {
	if c.NameNode == "" || c.NameNodeAPI == "" {
		return errors.New("a cluster needs at least namenode (HDFS RPC host:port) and namenode_api (namenode-ext's API)")
	}
	return nil
}

// FromConf describes the cluster a Hadoop client conf dir points at: fs.defaultFS (or
// dfs.namenode.rpc-address), dfs.namenode.http-address, newtricks.namenode.ext.api.address
// and newtricks.datanode.ext.api.address, an address without a host meaning the NameNode's
// (a DataNode's, for the DataNode API). Several dirs (the NameNode's and a DataNode's, say)
// are read in order, a later one's keys winning; each is also a doctor target. The kit does not
// run on the daemons' hosts (doctor runs with Remote), and reaches no co-process metrics
// (the shipped defaults keep them on loopback).
func FromConf(dirs ...string) (Cluster, error) {
	if len(dirs) == 0 {
		return Cluster{}, errors.New("no conf dir")
	}
	merged := map[string]string{}
	var c Cluster
	for _, d := range dirs {
		conf, err := doctor.LoadConf(d)
		if err != nil {
			return Cluster{}, err
		}
		for _, k := range []string{"fs.defaultFS", "dfs.namenode.rpc-address", "dfs.namenode.http-address",
			"newtricks.namenode.ext.api.address", "newtricks.datanode.ext.api.address"} {
			if v := conf.Get(k, ""); v != "" {
				merged[k] = v
			}
		}
		abs, _ := filepath.Abs(d)
		c.Doctor = append(c.Doctor, DoctorTarget{ConfDir: abs})
	}
	c.Name = dirs[0]
	nnHost := ""
	if u, err := url.Parse(merged["fs.defaultFS"]); err == nil && u.Scheme == "hdfs" && u.Hostname() != "" {
		port := u.Port()
		if port == "" {
			port = "8020"
		}
		nnHost, c.NameNode = u.Hostname(), net.JoinHostPort(u.Hostname(), port)
	}
	if rpc := merged["dfs.namenode.rpc-address"]; rpc != "" {
		if h, p, err := net.SplitHostPort(rpc); err == nil && h != "" && !isAny(h) {
			nnHost, c.NameNode = h, net.JoinHostPort(h, p)
		}
	}
	if c.NameNode == "" {
		return Cluster{}, fmt.Errorf("%s: no hdfs:// fs.defaultFS or dfs.namenode.rpc-address: which NameNode? (HA nameservices are not read yet: describe the cluster in a JSON file)", strings.Join(dirs, ","))
	}
	c.NameNodeHTTP = withHost(merged["dfs.namenode.http-address"], "9870", nnHost)
	c.NameNodeAPI = withHost(merged["newtricks.namenode.ext.api.address"], "9880", nnHost)
	if _, p, err := net.SplitHostPort(merged["newtricks.datanode.ext.api.address"]); err == nil {
		c.DataNodeAPIPort, _ = strconv.Atoi(p)
	}
	return c, c.check()
}

func isAny(h string) bool {
	ip := net.ParseIP(h)
	return h == "" || (ip != nil && ip.IsUnspecified())
}

// withHost is addr with host put in when addr has none (or the unspecified address); def is the
// port when addr is empty.
func withHost(addr, def, host string) string {
	if addr == "" {
		return net.JoinHostPort(host, def)
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if isAny(h) {
		h = host
	}
	return net.JoinHostPort(h, p)
}

func (c *Cluster) defaults() {
	if c.Name == "" {
		c.Name = c.NameNode
	}
	if c.NameNodeHTTP == "" {
		h, _, _ := net.SplitHostPort(c.NameNode)
		c.NameNodeHTTP = net.JoinHostPort(h, "9870")
	}
	if c.DataNodeAPIPort == 0 {
		c.DataNodeAPIPort = 9890
	}
	if c.User == "" {
		c.User = "kituser"
	}
	if c.Other == "" {
		c.Other = "kitother"
	}
	if c.Root == "" {
		c.Root = "/tmp/newtricks-kit"
	}
}
