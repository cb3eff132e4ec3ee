package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DefaultNameservice is HAConfig.Nameservice's default.
const DefaultNameservice = "ns1"

// HAConfig makes a cluster a nameservice, as production HDFS runs: two NameNodes
// (HANameNode(0) and (1), HA ids nn0 and nn1) sharing their edit log through a quorum of
// three JournalNodes, DataNodes that report to both, and, unless Manual, a ZooKeeper and a
// ZKFC per NameNode that fail over automatically. Fencing is shell(/bin/true): every daemon
// runs on this host. The zero value is automatic failover in nameservice "ns1".
type HAConfig struct {
	// Nameservice is the nameservice id: fs.defaultFS is hdfs://<Nameservice>. Lower-case
	// letters, digits and '-'. Default DefaultNameservice.
	Nameservice string
	// Manual leaves out ZooKeeper and the ZKFCs (three JVMs fewer): Start makes NameNode 0
	// active with DFSHAAdmin, and only Failover moves the active role.
	Manual bool
	// BootstrapStandby initialises NameNode 1 with `NameNode -bootstrapStandby` from the
	// running NameNode 0, as an admin would, instead of copying NameNode 0's freshly formatted
	// name directory (what Hadoop's MiniDFSCluster does), which lets both NameNodes start at
	// once. Measured start-up figures are in BUILDING.md.
	BootstrapStandby bool
	// ZKSessionTimeout is ha.zookeeper.session-timeout.ms: how long the lock of a ZKFC that
	// stopped talking to ZooKeeper (killed, or frozen) outlives it. A ZKFC whose NameNode died
	// gives the lock up at once, so this does not bound a NameNode's failover. Default
	// Hadoop's (10 s).
	ZKSessionTimeout time.Duration
}

// HANameNodeID is the HA id of HANameNode(i) in dfs.ha.namenodes.<nameservice>: "nn0", "nn1".
func HANameNodeID(i int) string { return "nn" + strconv.Itoa(i) }

// haNameNodes is the number of NameNodes of an HA cluster; haJournalNodes its JournalNodes.
const (
	haNameNodes    = 2
	haJournalNodes = 3
)

var nameserviceRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// JournalNodePorts are one JournalNode's loopback ports.
type JournalNodePorts struct {
	RPC  int `json:"rpc"`  // dfs.journalnode.rpc-address (the NameNodes' edits)
	HTTP int `json:"http"` // dfs.journalnode.http-address (edit segments for tailing, /jmx)
}

// HAPorts are the ports of an HA cluster besides its NameNodes' and DataNodes'.
type HAPorts struct {
	ZooKeeper    int                `json:"zookeeper,omitempty"` // clientPort; 0 with Manual
	JournalNodes []JournalNodePorts `json:"journalnodes"`
	ZKFC         []int              `json:"zkfc,omitempty"` // dfs.ha.zkfc.port of each NameNode; nil with Manual
}

type haPorts = HAPorts

// allocateHAPorts picks an HA cluster's NameNode, JournalNode, ZKFC and ZooKeeper ports.
func allocateHAPorts(manual bool) ([]NameNodePorts, *HAPorts, error) {
	n := 2*haNameNodes + 2*haJournalNodes
	if !manual {
		n += haNameNodes + 1
	}
	p, err := FreePorts(n)
	if err != nil {
		return nil, nil, err
	}
	nns := []NameNodePorts{{RPC: p[0], HTTP: p[1]}, {RPC: p[2], HTTP: p[3]}}
	ha := &HAPorts{}
	q := p[4:]
	for i := range haJournalNodes {
		ha.JournalNodes = append(ha.JournalNodes, JournalNodePorts{RPC: q[2*i], HTTP: q[2*i+1]})
	}
	q = q[2*haJournalNodes:]
	if !manual {
		ha.ZooKeeper = q[0]
		ha.ZKFC = []int{q[1], q[2]}
	}
	return nns, ha, nil
}

// sharedEditsURI is dfs.namenode.shared.edits.dir: the JournalNodes' quorum.
func sharedEditsURI(c Config, ha *HAPorts) string {
	addrs := make([]string, len(ha.JournalNodes))
	for i, j := range ha.JournalNodes {
		addrs[i] = "127.0.0.1:" + strconv.Itoa(j.RPC)
	}
	return "qjournal://" + strings.Join(addrs, ";") + "/" + c.HA.Nameservice
}

// haCore adds the nameservice to every daemon's core-site.xml.
func haCore(c Config, t topology, m map[string]string) {
	m["fs.defaultFS"] = "hdfs://" + c.HA.Nameservice
	if !c.HA.Manual {
		m["ha.zookeeper.quorum"] = "127.0.0.1:" + strconv.Itoa(t.ha.ZooKeeper)
		if c.HA.ZKSessionTimeout > 0 {
			m["ha.zookeeper.session-timeout.ms"] = strconv.FormatInt(c.HA.ZKSessionTimeout.Milliseconds(), 10)
		}
	}
}

// haCommon replaces the single NameNode's addresses in hdfsCommon with the nameservice's:
// what every daemon and client of an HA cluster shares.
func haCommon(c Config, t topology, m map[string]string) {
	ns := c.HA.Nameservice
	delete(m, "dfs.namenode.rpc-address")
	delete(m, "dfs.namenode.http-address")
	ids := make([]string, len(t.nns))
	for i, p := range t.nns {
		id := HANameNodeID(i)
		ids[i] = id
		m["dfs.namenode.rpc-address."+ns+"."+id] = fmt.Sprintf("127.0.0.1:%d", p.RPC)
		m["dfs.namenode.http-address."+ns+"."+id] = fmt.Sprintf("127.0.0.1:%d", p.HTTP)
		if !c.HA.Manual {
			m["dfs.ha.zkfc.port."+ns+"."+id] = strconv.Itoa(t.ha.ZKFC[i])
		}
	}
	m["dfs.nameservices"] = ns
	m["dfs.ha.namenodes."+ns] = strings.Join(ids, ",")
	m["dfs.namenode.shared.edits.dir"] = sharedEditsURI(c, t.ha)
	m["dfs.client.failover.proxy.provider."+ns] = "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider"
	m["dfs.ha.automatic-failover.enabled"] = strconv.FormatBool(!c.HA.Manual)
	// One host: nothing to fence but the process the ZKFC (or DFSHAAdmin) already asked to
	// step down; the quorum journal itself refuses a second writer.
	m["dfs.ha.fencing.methods"] = "shell(/bin/true)"
	// The JournalNodes' background sync of missed segments between themselves: not needed by a
	// cluster that lives minutes, and a wake-up less on two cores.
	m["dfs.journalnode.enable.sync"] = "false"
}

// journalNodeSite is JournalNode i's hdfs-site.xml.
func journalNodeSite(c Config, t topology, i int) map[string]string {
	m := hdfsCommon(c, t)
	j := t.ha.JournalNodes[i]
	m["dfs.journalnode.rpc-address"] = fmt.Sprintf("127.0.0.1:%d", j.RPC)
	m["dfs.journalnode.http-address"] = fmt.Sprintf("127.0.0.1:%d", j.HTTP)
	m["dfs.journalnode.https-address"] = "127.0.0.1:0"
	m["dfs.journalnode.edits.dir"] = filepath.Join(c.BaseDir, string(JournalNode(i)), "edits")
	return m
}

// zooCfg is the ZooKeeper server's configuration: standalone, loopback, no admin server.
func zooCfg(c Config, port int) string {
	return fmt.Sprintf(`# generated by newtricks harness/cluster
tickTime=1000
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr
`, filepath.Join(c.BaseDir, string(ZooKeeper), "data"), port)
}

// writeZooKeeperConf writes ZooKeeper's conf dir (log4j.properties on its classpath) and
// zoo.cfg, and empties its data dir.
func writeZooKeeperConf(c Config, port int) (string, error) {
	dir := filepath.Join(c.BaseDir, string(ZooKeeper))
	if err := os.RemoveAll(filepath.Join(dir, "data")); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return "", err
	}
	if err := writeConf(filepath.Join(dir, "conf"), map[string]string{}, map[string]string{}); err != nil {
		return "", err
	}
	cfg := filepath.Join(dir, "conf", "zoo.cfg")
	return cfg, os.WriteFile(cfg, []byte(zooCfg(c, port)), 0o644)
}
