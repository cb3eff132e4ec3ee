package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/newtricks/newtricks/internal/apiclient"
	"github.com/newtricks/newtricks/internal/siteconf"
)

// addrs is a reader config's address field: one "host:port", several comma-separated, or a
// JSON list of them (a nameservice's NameNodes or their namenode-ext).
type addrs []string

func (a *addrs) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		if strings.TrimSpace(one) == "" {
			*a = nil
			return nil
		}
		l, err := apiclient.SplitAddrs(one)
		if err != nil {
			return err
		}
		*a = l
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want \"host:port\" or a list of them")
	}
	if len(many) == 0 {
		*a = nil
		return nil
	}
	l, err := apiclient.SplitAddrs(strings.Join(many, ","))
	if err != nil {
		return err
	}
	*a = l
	return nil
}

// resolveNameService fills the config's NameNode and namenode-ext addresses from its
// nameservice (conf_dir's hdfs-site.xml, default $HADOOP_CONF_DIR) where they are not given.
func (c *readerConfig) resolveNameService() error {
	if c.Nameservice == "" && c.ConfDir == "" {
		return nil
	}
	ns, err := siteconf.LoadNameService(c.ConfDir, c.Nameservice)
	if err != nil {
		return fmt.Errorf("%w: reader config: %v", errBadArgument, err)
	}
	if len(c.NameNode) == 0 {
		c.NameNode = ns.RPCs()
	}
	if len(c.NameNodeExt) == 0 {
		c.NameNodeExt = ns.APIs()
	}
	return nil
}

// nameServiceJSON resolves a nameservice for the Python package's hints and mirror calls
// (one hdfs-site.xml parser, siteconf): {"name", "namenodes": [{"id", "rpc", "api"}]}.
func nameServiceJSON(confDir, ns string) ([]byte, error) {
	n, err := siteconf.LoadNameService(confDir, ns)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadArgument, err)
	}
	type nn struct {
		ID  string `json:"id"`
		RPC string `json:"rpc"`
		API string `json:"api"`
	}
	out := struct {
		Name      string `json:"name"`
		NameNodes []nn   `json:"namenodes"`
	}{Name: n.Name}
	for _, x := range n.NameNodes {
		out.NameNodes = append(out.NameNodes, nn{ID: x.ID, RPC: x.RPC, API: x.API})
	}
	return json.Marshal(out)
}
