package doctor

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/newtricks/newtricks/internal/siteconf"
)

// clusterWideKeys must agree between this conf dir and every running daemon: a mismatch is a
// cluster whose daemons disagree on security.
var clusterWideKeys = []string{keyAuth, keyBlockToken}

// runningConf reads a daemon's live configuration from its /conf servlet (Hadoop writes it as
// XML), or returns an error saying why it could not.
func (d *doctor) runningConf(ctx context.Context, base string) (*Conf, error) {
	var doc struct {
		Properties []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := d.getDaemon(ctx, base, "/conf", func(body io.Reader) error {
		return xml.NewDecoder(body).Decode(&doc)
	}); err != nil {
		return nil, err
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	props := make(map[string]string, len(doc.Properties))
	for _, p := range doc.Properties {
		props[p.Name] = p.Value
	}
	return siteconf.New(base+"/conf", props), nil
}

// compareRunning reports keys whose value in the conf dir differs from the running daemon's.
// Cluster-wide security keys fail; the hooks' keys warn (the daemon runs with the old value
// until it restarts).
func (d *doctor) compareRunning(ctx context.Context, who, base string, keysOf func(rc *Conf) []string) {
	check := "running-conf"
	rc, err := d.runningConf(ctx, base)
	if err != nil {
		d.r.warn(check, "", "%s: cannot read its running configuration: %v", who, err)
		return
	}
	keys := keysOf(rc)
	var security, hooks []string
	for _, k := range keys {
		mine, theirs := d.conf.Get(k, ""), rc.Get(k, "")
		if normalize(k, mine) == normalize(k, theirs) {
			continue
		}
		line := fmt.Sprintf("%s: running %q, %s %q", k, theirs, d.o.ConfDir, mine)
		if contains(clusterWideKeys, k) {
			security = append(security, line)
		} else {
			hooks = append(hooks, line)
		}
	}
	switch {
	case len(security) > 0:
		d.r.fail(check, strings.SplitN(security[0], ":", 2)[0], "%s disagrees with this conf on security, so one of them is wrong for the cluster: %s",
			who, strings.Join(security, "; "))
	case len(hooks) > 0:
		d.r.warn(check, strings.SplitN(hooks[0], ":", 2)[0], "%s runs with other newtricks settings than this conf (restart it to apply them): %s",
			who, strings.Join(hooks, "; "))
	default:
		d.r.pass(check, "", "%s runs with this conf's settings (%d keys compared)", who, len(keys))
	}
}

// normalize makes equal values compare equal: booleans and auth modes ignore case, lists ignore
// blanks around commas.
func normalize(k, v string) string {
	v = strings.TrimSpace(v)
	switch k {
	case keyAuth, keyBlockToken:
		v = strings.ToLower(v)
		if k == keyAuth && v == "" {
			v = "simple"
		}
		if k == keyBlockToken && v == "" {
			v = "false"
		}
	case keyNNPlugins, keyDNPlugins, keyAuditLoggers, keyEditsDir:
		parts := strings.Split(v, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		v = strings.Join(parts, ",")
	}
	return v
}

// nameNodeKeys are compared with the running NameNode when this conf dir enables its hook:
// the hook keys and every newtricks.* key either side sets.
func (d *doctor) nameNodeKeys(rc *Conf) []string {
	keys := append([]string{}, clusterWideKeys...)
	if !d.nnEnabled {
		return keys
	}
	keys = append(keys, keyNNPlugins, keyAuditLoggers, keyJournalPlugin)
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k] = true
	}
	for k := range d.conf.Props() {
		if strings.HasPrefix(k, "newtricks.") && !seen[k] {
			keys, seen[k] = append(keys, k), true
		}
	}
	for k := range rc.Props() {
		if strings.HasPrefix(k, "newtricks.") && !seen[k] {
			keys, seen[k] = append(keys, k), true
		}
	}
	sort.Strings(keys[len(clusterWideKeys):])
	return keys
}

// dataNodeKeys are compared with each running DataNode when this conf dir enables its hook
// (per-host keys such as addresses and log dirs may differ between DataNodes and are left out).
func (d *doctor) dataNodeKeys(*Conf) []string {
	return append(append([]string{}, clusterWideKeys...), keyDNPlugins, keyDNBinary)
}
