package nnext

import (
	"fmt"
	"strings"
	"time"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/events"
)

// Prefix of every namenode-ext key in hdfs-site.xml.
const Prefix = "newtricks.namenode.ext"

// Config is namenode-ext's own configuration, read from the keys the NameNode hook pushes.
type Config struct {
	// EventsRetain (newtricks.namenode.ext.events.retain, default 10000) is how many recent
	// events RecentEvents can return.
	EventsRetain int
	// LogLevel (newtricks.namenode.ext.log.level, default "info").
	LogLevel string
	// Events (newtricks.namenode.ext.events.subscribe, default none) are events to receive
	// and keep for RecentEvents besides what the subsystems subscribe to: namespace types
	// ("CLOSE") and "audit:<cmd>", comma-separated. The hook forwards nothing else.
	// newtricks.namenode.ext.events.subscribe.prefixes (comma-separated, default every path)
	// limits those namespace events to paths starting with one of the prefixes.
	Events events.Interest
	// DataNodesTTL (newtricks.namenode.ext.datanodes.ttl.ms, default 15000, 3000..600000) is how
	// long a datanode-ext's registration in the DataNodeDirectory lasts without renewal; each
	// renews every third of it.
	DataNodesTTL time.Duration
	// RegisterUsers (newtricks.namenode.ext.datanodes.register.users, comma-separated short
	// names; default: the user namenode-ext's own Kerberos principal maps to) may register
	// datanode-ext endpoints when the caller's identity is proven (Kerberos, tokens). Under
	// simple authentication a registration is checked only against the DataNode's address.
	RegisterUsers []string
	// EventsStateDir (newtricks.namenode.ext.events.state.dir, default "/") carries, on an HA
	// nameservice, the event stream's acknowledged position (xattr PositionXAttr), written by
	// the active NameNode's namenode-ext every EventsPersist
	// (newtricks.namenode.ext.events.state.persist.ms, default 1000, 100..60000) while it moved.
	// Keep it writable by the NameNode's user only, as the hint records' directory.
	EventsStateDir string
	EventsPersist  time.Duration
}

// ConfigFromConf reads and validates Config.
func ConfigFromConf(c coproc.Conf) (Config, error) {
	retain, err := c.Int(Prefix+".events.retain", 10000)
	if err != nil {
		return Config{}, err
	}
	in, err := events.ParseInterest(c.String(Prefix+".events.subscribe", ""))
	if err != nil {
		return Config{}, fmt.Errorf("%w: %s.events.subscribe: %v", coproc.ErrBadConfig, Prefix, err)
	}
	for _, p := range strings.Split(c.String(Prefix+".events.subscribe.prefixes", ""), ",") {
		if p = strings.TrimSpace(p); p != "" {
			if !strings.HasPrefix(p, "/") {
				return Config{}, fmt.Errorf("%w: %s.events.subscribe.prefixes: %q is not an absolute path", coproc.ErrBadConfig, Prefix, p)
			}
			in.PathPrefixes = append(in.PathPrefixes, p)
		}
	}
	ttl, err := c.Duration(Prefix+".datanodes.ttl.ms", 15*time.Second)
	if err != nil {
		return Config{}, err
	}
	persist, err := c.Duration(Prefix+".events.state.persist.ms", time.Second)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{EventsRetain: int(retain), LogLevel: c.String(Prefix+".log.level", "info"), Events: in,
		DataNodesTTL: ttl, RegisterUsers: splitList(c.String(Prefix+".datanodes.register.users", "")),
		EventsStateDir: c.String(Prefix+".events.state.dir", "/"), EventsPersist: persist}
	return cfg, cfg.Validate()
}

// Validate checks ranges.
func (c Config) Validate() error {
	if c.EventsRetain < 1 || c.EventsRetain > 10_000_000 {
		return fmt.Errorf("%w: %s.events.retain=%d must be in [1, 10000000]", coproc.ErrBadConfig, Prefix, c.EventsRetain)
	}
	if c.DataNodesTTL < 3*time.Second || c.DataNodesTTL > 10*time.Minute {
		return fmt.Errorf("%w: %s.datanodes.ttl.ms=%d must be in [3000, 600000]", coproc.ErrBadConfig, Prefix, c.DataNodesTTL.Milliseconds())
	}
	if !strings.HasPrefix(c.EventsStateDir, "/") {
		return fmt.Errorf("%w: %s.events.state.dir=%q is not an absolute path", coproc.ErrBadConfig, Prefix, c.EventsStateDir)
	}
	if c.EventsPersist < 100*time.Millisecond || c.EventsPersist > time.Minute {
		return fmt.Errorf("%w: %s.events.state.persist.ms=%d must be in [100, 60000]", coproc.ErrBadConfig, Prefix, c.EventsPersist.Milliseconds())
	}
	return nil
}
