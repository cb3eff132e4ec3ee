package doctor

import (
	"regexp"
	"strings"

	"github.com/newtricks/newtricks/datanode-ext/dnext"
	"github.com/newtricks/newtricks/datanode-ext/offload"
	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/mirror"
	"github.com/newtricks/newtricks/namenode-ext/nnext"
)

// forwardedKeys are the HDFS keys the hooks send in Extension/Configure besides every
// newtricks.* key (HookConf.FORWARDED_HDFS_KEYS).
var forwardedKeys = []string{
	"fs.defaultFS", "dfs.permissions.enabled", "dfs.permissions.superusergroup",
	"dfs.block.access.token.enable", "dfs.namenode.rpc-address", "dfs.datanode.address",
	"hadoop.tmp.dir", "dfs.replication", "hadoop.security.authentication", "dfs.datanode.ipc.address",
}

// configureMap is what a hook sends its co-process in Configure: every newtricks.* key and
// the forwarded HDFS keys, expanded as Hadoop's Configuration.get expands them.
func (d *doctor) configureMap() map[string]string {
	m := map[string]string{}
	for k := range d.conf.Props() {
		if strings.HasPrefix(k, "newtricks.") {
			m[k] = d.conf.Get(k, "")
		}
	}
	for _, k := range forwardedKeys {
		if _, ok := d.conf.Raw(k); ok {
			m[k] = d.conf.Get(k, "")
		}
	}
	return m
}

var (
	keyInMessage  = regexp.MustCompile(`newtricks\.[a-zA-Z0-9_.\-]+[a-zA-Z0-9_]`)
	wordInMessage = regexp.MustCompile(`[a-z][a-z0-9_.\-]*[a-z0-9]`)
)

// guessKey finds the key a parser's error is about: a full newtricks.* key in the message,
// else a configured newtricks.* key the message names by its last part(s)
// ("readers-per-replica 0 < 1").
func guessKey(msg string, conf map[string]string) string {
	if k := keyInMessage.FindString(msg); k != "" {
		return k
	}
	best := ""
	for _, w := range wordInMessage.FindAllString(msg, -1) {
		if !strings.ContainsAny(w, ".-") {
			continue // a plain word, not a key's tail
		}
		for k := range conf {
			if strings.HasPrefix(k, "newtricks.") && strings.HasSuffix(k, "."+w) && len(w) > len(best) {
				best = k
			}
		}
	}
	return best
}

// checkCoprocessConf runs the co-processes' own configuration parsers on what their hooks
// will send: a value they refuse fails their Configure, so the hook restarts them forever.
func (d *doctor) checkCoprocessConf(s side) {
	m := d.configureMap()
	c := coproc.Conf(m)
	type part struct {
		name string
		run  func() error
	}
	var parts []part
	if s.name == "namenode" {
		parts = []part{
			{"events", func() error { _, err := nnext.ConfigFromConf(c); return err }},
			{"hotspot", func() error { _, err := hotspot.ConfigFromMap(m); return err }},
			{"mirror", func() error { _, err := mirror.ConfigFromMap(m); return err }},
		}
	} else {
		parts = []part{
			{"replicas", func() error { _, err := dnext.ConfigFromConf(c); return err }},
			{"offload", func() error { _, _, err := offload.ConfigFromConf(c); return err }},
		}
	}
	check := s.name + ".ext-config"
	var ok []string
	failed := false
	for _, p := range parts {
		if err := p.run(); err != nil {
			key := guessKey(err.Error(), m)
			d.r.fail(check, key, "%s-ext would refuse its configuration (%s): %v", s.name, p.name, err)
			failed = true
			continue
		}
		ok = append(ok, p.name)
	}
	if !failed {
		d.r.pass(check, "", "%s-ext accepts its configuration (%s)", s.name, strings.Join(ok, ", "))
	}
}
