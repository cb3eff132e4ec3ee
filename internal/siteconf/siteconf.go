// Package siteconf reads a Hadoop configuration directory as the daemons and clients do
// (core-site.xml overlaid by hdfs-site.xml, ${var} expanded), for newtricks doctor, the
// conformance kit, and the clients of a nameservice (NameService).
package siteconf

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
)

// Conf is a Hadoop configuration as the daemons read it: core-site.xml overlaid by
// hdfs-site.xml, with ${var} references expanded.
type Conf struct {
	Dir   string
	props map[string]string
	// From says which file set each key.
	From map[string]string
}

// ErrBadConf: the conf dir cannot be read, or does not say what was asked of it.
var ErrBadConf = errors.New("hadoop configuration")

// New is a Conf of props as given (a daemon's running configuration, say), read from dir.
func New(dir string, props map[string]string) *Conf {
	c := &Conf{Dir: dir, props: map[string]string{}, From: map[string]string{}}
	for k, v := range props {
		c.props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return c
}

// maxSiteBytes bounds one site file (production hdfs-site.xml files are tens of KiB).
const maxSiteBytes = 16 << 20

// Load reads core-site.xml (optional) and hdfs-site.xml (required) from dir.
func Load(dir string) (*Conf, error) {
	c := &Conf{Dir: dir, props: map[string]string{}, From: map[string]string{}}
	for _, name := range []string{"core-site.xml", "hdfs-site.xml"} {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && name == "core-site.xml" {
				continue
			}
			return nil, fmt.Errorf("%w: %v", ErrBadConf, err)
		}
		if len(b) > maxSiteBytes {
			return nil, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrBadConf, p, len(b), maxSiteBytes)
		}
		var doc struct {
			Properties []struct {
				Name  string `xml:"name"`
				Value string `xml:"value"`
			} `xml:"property"`
		}
		if err := xml.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadConf, p, err)
		}
		for _, pr := range doc.Properties {
			k := strings.TrimSpace(pr.Name)
			if k == "" {
				continue
			}
			c.props[k] = strings.TrimSpace(pr.Value)
			c.From[k] = name
		}
	}
	return c, nil
}

// Props returns a copy of every key as written (not expanded).
func (c *Conf) Props() map[string]string {
	m := make(map[string]string, len(c.props))
	for k, v := range c.props {
		m[k] = v
	}
	return m
}

// Len is the number of keys set.
func (c *Conf) Len() int { return len(c.props) }

// Raw returns the value as written and whether the key is set.
func (c *Conf) Raw(k string) (string, bool) {
	v, ok := c.props[k]
	return v, ok
}

// Get returns the expanded value of k, or def when it is not set.
func (c *Conf) Get(k, def string) string {
	v, ok := c.props[k]
	if !ok {
		v = def
	}
	return c.expand(v, 0)
}

// List returns a comma-separated key's trimmed, non-empty entries.
func (c *Conf) List(k string) []string {
	var out []string
	for _, s := range strings.Split(c.Get(k, ""), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

var varRef = regexp.MustCompile(`\$\{([^}$\s]+)\}`)

// expand substitutes ${key}, ${env.NAME} and ${user.name} as Hadoop's Configuration does
// (bounded depth, unknown references left as they are).
func (c *Conf) expand(v string, depth int) string {
	if depth > 20 || !strings.Contains(v, "${") {
		return v
	}
	return varRef.ReplaceAllStringFunc(v, func(m string) string {
		name := m[2 : len(m)-1]
		if val, ok := c.props[name]; ok {
			return c.expand(val, depth+1)
		}
		if env, ok := strings.CutPrefix(name, "env."); ok {
			if val, ok := os.LookupEnv(env); ok {
				return val
			}
			return m
		}
		if name == "user.name" {
			if u, err := user.Current(); err == nil {
				return u.Username
			}
		}
		return m
	})
}
