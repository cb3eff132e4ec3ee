package cluster

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// NameNodePorts are the NameNode's loopback ports.
type NameNodePorts struct {
	RPC  int `json:"rpc"`  // dfs.namenode.rpc-address
	HTTP int `json:"http"` // dfs.namenode.http-address (web UI, /jmx, WebHDFS)
}

// DataNodePorts are one DataNode's loopback ports.
type DataNodePorts struct {
	Xfer int `json:"xfer"` // dfs.datanode.address (block data transfer)
	HTTP int `json:"http"` // dfs.datanode.http.address (web UI, /jmx)
	IPC  int `json:"ipc"`  // dfs.datanode.ipc.address
}

// topology is every address of a cluster that its daemons' configurations name.
type topology struct {
	nns []NameNodePorts // one, or two in an HA cluster
	ha  *haPorts        // nil without HA
}

// nameNode is the only NameNode's ports (or NameNode 0's).
func (t topology) nameNode() NameNodePorts {
	if len(t.nns) == 0 {
		return NameNodePorts{}
	}
	return t.nns[0]
}

// coreSite returns the core-site.xml properties shared by every daemon.
func coreSite(c Config, t topology) map[string]string {
	m := map[string]string{
		"fs.defaultFS":                      fmt.Sprintf("hdfs://127.0.0.1:%d", t.nameNode().RPC),
		"hadoop.tmp.dir":                    filepath.Join(c.BaseDir, "tmp"),
		"hadoop.security.authentication":    "simple",
		"hadoop.security.authorization":     "false",
		"ipc.client.connect.retry.interval": "500",
		// Loopback only: never wait on DNS.
		"hadoop.security.token.service.use_ip": "true",
	}
	if c.HA != nil {
		haCore(c, t, m)
	}
	merge(m, c.CoreSite)
	return m
}

// nameNodeCore is NameNode i's core-site.xml (and its ZKFC's).
func nameNodeCore(c Config, t topology, i int) map[string]string {
	m := coreSite(c, t)
	if c.HA != nil {
		// Each NameNode of a pair keeps what it puts under hadoop.tmp.dir (the hooks' resume
		// point, for one) to itself, as on two hosts.
		m["hadoop.tmp.dir"] = filepath.Join(c.BaseDir, "tmp", string(HANameNode(i)))
		if v, ok := c.CoreSite["hadoop.tmp.dir"]; ok {
			m["hadoop.tmp.dir"] = v
		}
	}
	return m
}

// hdfsCommon returns the hdfs-site.xml properties every daemon of c shares: the harness's
// test-friendly defaults, then Config.HDFSSite.
func hdfsCommon(c Config, t topology) map[string]string {
	nn := t.nameNode()
	m := map[string]string{
		"dfs.namenode.rpc-address":             fmt.Sprintf("127.0.0.1:%d", nn.RPC),
		"dfs.namenode.http-address":            fmt.Sprintf("127.0.0.1:%d", nn.HTTP),
		"dfs.namenode.https-address":           "127.0.0.1:0",
		"dfs.namenode.secondary.http-address":  "127.0.0.1:0",
		"dfs.namenode.secondary.https-address": "127.0.0.1:0",
		"dfs.namenode.backup.address":          "127.0.0.1:0",
		"dfs.namenode.backup.http-address":     "127.0.0.1:0",
		"dfs.namenode.rpc-bind-host":           "127.0.0.1",
		"dfs.namenode.servicerpc-bind-host":    "127.0.0.1",
		"dfs.namenode.lifeline.rpc-bind-host":  "127.0.0.1",
		"dfs.namenode.http-bind-host":          "127.0.0.1",
		"dfs.namenode.https-bind-host":         "127.0.0.1",
		"dfs.namenode.name.dir":                "file://" + filepath.Join(nameNodeDir(c, 0), "name"),

		"dfs.replication":                                      strconv.Itoa(max(1, min(3, c.DataNodes))),
		"dfs.namenode.safemode.extension":                      "0",
		"dfs.namenode.safemode.min.datanodes":                  "0",
		"dfs.heartbeat.interval":                               "1",
		"dfs.namenode.heartbeat.recheck-interval":              "2000",
		"dfs.namenode.redundancy.interval.seconds":             "1",
		"dfs.permissions.enabled":                              "true",
		"dfs.block.access.token.enable":                        "true",
		"dfs.datanode.du.reserved":                             "0",
		"dfs.namenode.fs-limits.min-block-size":                "0",
		"dfs.namenode.datanode.registration.ip-hostname-check": "false",
		"dfs.namenode.resource.du.reserved":                    strconv.Itoa(10 << 20),
		"dfs.datanode.disk.check.min.gap":                      "0s",
		"dfs.datanode.disk.check.timeout":                      "10s",
		"dfs.datanode.hostname":                                "127.0.0.1",
		"dfs.client.use.datanode.hostname":                     "false",
		"dfs.webhdfs.enabled":                                  "true",
		// Keep thread counts modest: several clusters share two cores.
		"dfs.namenode.handler.count":         "10",
		"dfs.namenode.service.handler.count": "4",
		"dfs.datanode.handler.count":         "4",
	}
	if c.HA != nil {
		haCommon(c, t, m)
	}
	merge(m, c.HDFSSite)
	return m
}

// nameNodeSite is NameNode i's hdfs-site.xml (i is 0 without HA); an HA NameNode's ZKFC
// uses it too.
func nameNodeSite(c Config, t topology, i int) map[string]string {
	m := hdfsCommon(c, t)
	if c.HA != nil {
		m["dfs.ha.namenode.id"] = HANameNodeID(i)
		m["dfs.namenode.name.dir"] = "file://" + filepath.Join(nameNodeDir(c, i), "name")
		if v, ok := c.HDFSSite["dfs.namenode.name.dir"]; ok {
			m["dfs.namenode.name.dir"] = v
		}
	}
	merge(m, c.NameNodeSite)
	if c.NameNodeSiteFor != nil {
		merge(m, c.NameNodeSiteFor(i))
	}
	return m
}

// dataNodeSite is DataNode i's hdfs-site.xml.
func dataNodeSite(c Config, t topology, i int, dn DataNodePorts) map[string]string {
	m := hdfsCommon(c, t)
	m["dfs.datanode.address"] = fmt.Sprintf("127.0.0.1:%d", dn.Xfer)
	m["dfs.datanode.http.address"] = fmt.Sprintf("127.0.0.1:%d", dn.HTTP)
	m["dfs.datanode.ipc.address"] = fmt.Sprintf("127.0.0.1:%d", dn.IPC)
	m["dfs.datanode.https.address"] = "127.0.0.1:0"
	m["dfs.datanode.data.dir"] = "file://" + filepath.Join(dataNodeDir(c, i), "data")
	if c.DataNodeSite != nil {
		merge(m, c.DataNodeSite(i))
	}
	return m
}

func merge(dst, src map[string]string) {
	for k, v := range src {
		dst[k] = v
	}
}

// SiteXML renders properties as a Hadoop configuration file, keys sorted so output is
// stable.
func SiteXML(props map[string]string) []byte {
	type property struct {
		Name  string `xml:"name"`
		Value string `xml:"value"`
	}
	type configuration struct {
		XMLName    xml.Name   `xml:"configuration"`
		Properties []property `xml:"property"`
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	conf := configuration{}
	for _, k := range keys {
		conf.Properties = append(conf.Properties, property{k, props[k]})
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString("<!-- generated by newtricks harness/cluster; edits are overwritten -->\n")
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(conf); err != nil {
		// Only strings are encoded, so this cannot fail.
		panic(err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// log4jProperties sends everything to stderr, which the harness writes to the daemon's log.
const log4jProperties = `# generated by newtricks harness/cluster
hadoop.root.logger=INFO,console
log4j.rootLogger=${hadoop.root.logger}
log4j.threshold=ALL
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2} [%t]: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
log4j.logger.org.apache.hadoop.conf.Configuration.deprecation=WARN
log4j.logger.BlockStateChange=WARN
log4j.logger.org.apache.hadoop.hdfs.StateChange=WARN
log4j.logger.http.requests=WARN
`

// writeConf writes a daemon's conf dir.
func writeConf(dir string, core, hdfs map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{
		"core-site.xml":    SiteXML(core),
		"hdfs-site.xml":    SiteXML(hdfs),
		"log4j.properties": []byte(log4jProperties),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// nameNodeDir is NameNode i's directory (i is 0 without HA).
func nameNodeDir(c Config, i int) string {
	if c.HA != nil {
		return filepath.Join(c.BaseDir, string(HANameNode(i)))
	}
	return filepath.Join(c.BaseDir, string(NameNode))
}
func dataNodeDir(c Config, i int) string {
	return filepath.Join(c.BaseDir, fmt.Sprintf("datanode-%d", i))
}
