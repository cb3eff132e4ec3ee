package hotspot

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/newtricks/newtricks/internal/coproc"
)

// Config is the hotspot manager's configuration, built once from hdfs-site.xml keys (the
// NameNode hook pushes every "newtricks.*" key). The key of each field is in its comment;
// DefaultConfig holds the defaults.
type Config struct {
	// AllowedPrefixes: only files under one of these absolute paths may be hinted
	// (newtricks.hotspot.allowed-prefixes, comma-separated, default "/").
	AllowedPrefixes []string
	// MaxPaths bounds the entries of one request (newtricks.hotspot.max-paths, default 1000).
	MaxPaths int
	// MaxFiles bounds the files one hint expands to; the rest are skipped with TOO_MANY_FILES
	// (newtricks.hotspot.max-files, default 10000).
	MaxFiles int
	// MaxActiveHints bounds concurrent hints; each holds one xattr on the state dir, and HDFS
	// allows 32 per inode by default (newtricks.hotspot.max-active-hints, default 16).
	MaxActiveHints int
	// MaxActiveHintsPerUser bounds the hints of one user at once, dry runs under way included,
	// so that one user cannot take every hint from the others; implicit (reactive) hints count
	// only against MaxActiveHints (newtricks.hotspot.max-active-hints.per-user, default 4).
	MaxActiveHintsPerUser int
	// MaxLead bounds how far in the future a window may start (newtricks.hotspot.max-lead,
	// default 1h).
	MaxLead time.Duration
	// MaxDuration bounds a hot window, also after Extend (newtricks.hotspot.max-duration,
	// default 6h).
	MaxDuration time.Duration

	// MinFactor is the lowest factor the planner raises a hinted file to
	// (newtricks.hotspot.min-factor, default 3).
	MinFactor int
	// MaxFactorQuiet is the factor cap on a quiet cluster (newtricks.hotspot.max-factor.quiet,
	// default 512: on a quiet cluster the spread, the readers and the space budget decide).
	MaxFactorQuiet int
	// MaxFactorBusy is the factor cap on a busy cluster (newtricks.hotspot.max-factor.busy,
	// default 20).
	MaxFactorBusy int
	// ReadersPerReplica is how many concurrent readers one replica should serve
	// (newtricks.hotspot.readers-per-replica, default 2).
	ReadersPerReplica int
	// ReplicationMax is the NameNode's dfs.replication.max; no target exceeds it
	// (newtricks.hotspot.replication-max, falls back to dfs.replication.max, default 512).
	ReplicationMax int
	// BusyXceivers is the mean DataNode xceiver count at which the cluster counts as fully
	// busy (newtricks.hotspot.load.busy-xceivers, default 64).
	BusyXceivers float64
	// BusyPendingPerNode is the pending reconstruction work, in blocks per live DataNode, at
	// which the cluster counts as fully busy (newtricks.hotspot.load.busy-pending-per-node,
	// default 50).
	BusyPendingPerNode float64
	// MaxSpaceFraction bounds the extra replicas of a hint, with those other hints are still
	// copying, to this fraction of the free space of the DataNodes that can take them
	// (newtricks.hotspot.max-space-fraction, default 0.1).
	MaxSpaceFraction float64
	// CopyBandwidth is the assumed replication copy rate of one DataNode in bytes/s, for the
	// ready-time estimate (newtricks.hotspot.copy-bandwidth, default 100 MiB/s).
	CopyBandwidth int64
	// RedundancyInterval is the NameNode's dfs.namenode.redundancy.interval.seconds: each
	// interval it schedules at most live DataNodes x work multiplier blocks, which bounds the
	// ready time of a hint of many blocks (newtricks.hotspot.redundancy-interval, falls back to
	// dfs.namenode.redundancy.interval.seconds, default 3s).
	RedundancyInterval time.Duration
	// ScheduleDelay is the assumed delay before the NameNode schedules new replication work
	// (about two redundancy intervals plus a heartbeat), for the ready-time estimate
	// (newtricks.hotspot.schedule-delay, default 6s).
	ScheduleDelay time.Duration

	// Reactive turns on implicit hints from audit "open" events (newtricks.hotspot.reactive,
	// default false).
	Reactive bool
	// ReactiveClients is K: distinct clients (ip+user) that must open one file within
	// ReactiveWindow (newtricks.hotspot.reactive.clients, default 8).
	ReactiveClients int
	// ReactiveWindow is W (newtricks.hotspot.reactive.window, default 10s).
	ReactiveWindow time.Duration
	// ReactiveDuration is the hot window of an implicit hint
	// (newtricks.hotspot.reactive.duration, default 10m).
	ReactiveDuration time.Duration
	// ReactiveCooldown: a file is not hinted implicitly again until this long after its
	// implicit hint ended (newtricks.hotspot.reactive.cooldown, default 30m).
	ReactiveCooldown time.Duration
	// ReactiveUser is the HDFS user implicit hints act as (newtricks.hotspot.reactive.user,
	// required when Reactive is on): they expand, check and raise files with that user's rights
	// only, so a file it may not write is skipped with the reason, as for any user.
	ReactiveUser string
	// ReactiveMaxTracked bounds the files reactive mode tracks at once
	// (newtricks.hotspot.reactive.max-tracked, default 10000).
	ReactiveMaxTracked int

	// StateDir is the existing HDFS directory whose xattrs hold the hint registry
	// (newtricks.hotspot.state.dir, default "/").
	StateDir string
	// XAttrPrefix names every xattr written (newtricks.hotspot.state.xattr-prefix, default
	// "user.newtricks.hotspot"): "<prefix>" on a boosted file, "<prefix>.hint.<id>" and
	// "<prefix>.limits" on StateDir.
	XAttrPrefix string
	// MaxXAttrBytes is the size budget of one xattr (name + value), matching the NameNode's
	// dfs.namenode.fs-limits.max-xattr-size (newtricks.hotspot.state.max-xattr-bytes, falls
	// back to dfs.namenode.fs-limits.max-xattr-size, default 16384).
	MaxXAttrBytes int
	// PollInterval paces readiness tracking, restores and retries
	// (newtricks.hotspot.poll-interval, default 1s).
	PollInterval time.Duration

	// Boost holds the re-replication limits set through NameNode reconfiguration while any
	// hint is being made ready, restored afterwards. An empty map disables boosting.
	// Keys: newtricks.hotspot.boost.max-streams (dfs.namenode.replication.max-streams,
	// default 32), newtricks.hotspot.boost.max-streams-hard-limit
	// (dfs.namenode.replication.max-streams-hard-limit, default 64),
	// newtricks.hotspot.boost.work-multiplier
	// (dfs.namenode.replication.work.multiplier.per.iteration, default 16); a value of 0
	// leaves that limit alone.
	Boost []BoostLimit
	// BoostMaxDuration bounds how long the limits stay boosted for hints that do not get
	// ready (a corrupt block, a full cluster); 0 means no bound
	// (newtricks.hotspot.boost.max-duration, default 10m).
	BoostMaxDuration time.Duration
}

// BoostLimit is one reconfigurable NameNode property and the value it is raised to.
type BoostLimit struct {
	Key   string
	Value int
}

// The NameNode properties boosted, in the order they are raised (hard limit first: the
// NameNode rejects max-streams above the hard limit in some versions); restored in reverse.
const (
	KeyMaxStreamsHard  = "dfs.namenode.replication.max-streams-hard-limit"
	KeyMaxStreams      = "dfs.namenode.replication.max-streams"
	KeyWorkMultiplier  = "dfs.namenode.replication.work.multiplier.per.iteration"
	confPrefix         = "newtricks.hotspot."
	defaultXAttrPrefix = "user.newtricks.hotspot"
)

// DefaultConfig returns the configuration used for every key that is not set.
func DefaultConfig() Config {
	return Config{
		AllowedPrefixes:       []string{"/"},
		MaxPaths:              1000,
		MaxFiles:              10000,
		MaxActiveHints:        16,
		MaxActiveHintsPerUser: 4,
		MaxLead:               time.Hour,
		MaxDuration:           6 * time.Hour,
		MinFactor:             3,
		MaxFactorQuiet:        512,
		MaxFactorBusy:         20,
		ReadersPerReplica:     2,
		ReplicationMax:        512,
		BusyXceivers:          64,
		BusyPendingPerNode:    50,
		MaxSpaceFraction:      0.1,
		CopyBandwidth:         100 << 20,
		ScheduleDelay:         6 * time.Second,
		RedundancyInterval:    3 * time.Second,
		ReactiveClients:       8,
		ReactiveWindow:        10 * time.Second,
		ReactiveDuration:      10 * time.Minute,
		ReactiveCooldown:      30 * time.Minute,
		ReactiveMaxTracked:    10000,
		StateDir:              "/",
		XAttrPrefix:           defaultXAttrPrefix,
		MaxXAttrBytes:         16384,
		PollInterval:          time.Second,
		BoostMaxDuration:      10 * time.Minute,
		Boost: []BoostLimit{
			{KeyMaxStreamsHard, 64},
			{KeyMaxStreams, 32},
			{KeyWorkMultiplier, 16},
		},
	}
}

// ConfigFromMap builds a Config from the daemon's configuration keys and validates it.
func ConfigFromMap(conf map[string]string) (Config, error) {
	c := coproc.Conf(conf)
	cfg := DefaultConfig()
	var errs []error
	intKey := func(dst *int, key string, fallbacks ...string) {
		def := int64(*dst)
		for _, fb := range fallbacks {
			if v, err := c.Int(fb, def); err == nil {
				def = v
			}
		}
		v, err := c.Int(key, def)
		if err != nil {
			errs = append(errs, err)
			return
		}
		*dst = int(v)
	}
	durKey := func(dst *time.Duration, key string) {
		v, err := c.Duration(key, *dst)
		if err != nil {
			errs = append(errs, err)
			return
		}
		*dst = v
	}
	floatKey := func(dst *float64, key string) {
		v := c.String(key, "")
		if v == "" {
			return
		}
		var f float64
		if _, err := fmt.Sscan(v, &f); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s=%q is not a number", ErrBadConfig, key, v))
			return
		}
		*dst = f
	}

	if v := c.String(confPrefix+"allowed-prefixes", ""); v != "" {
		cfg.AllowedPrefixes = nil
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				cfg.AllowedPrefixes = append(cfg.AllowedPrefixes, p)
			}
		}
	}
	intKey(&cfg.MaxPaths, confPrefix+"max-paths")
	intKey(&cfg.MaxFiles, confPrefix+"max-files")
	intKey(&cfg.MaxActiveHints, confPrefix+"max-active-hints")
	intKey(&cfg.MaxActiveHintsPerUser, confPrefix+"max-active-hints.per-user")
	durKey(&cfg.MaxLead, confPrefix+"max-lead")
	durKey(&cfg.MaxDuration, confPrefix+"max-duration")
	intKey(&cfg.MinFactor, confPrefix+"min-factor")
	intKey(&cfg.MaxFactorQuiet, confPrefix+"max-factor.quiet")
	intKey(&cfg.MaxFactorBusy, confPrefix+"max-factor.busy")
	intKey(&cfg.ReadersPerReplica, confPrefix+"readers-per-replica")
	intKey(&cfg.ReplicationMax, confPrefix+"replication-max", "dfs.replication.max")
	floatKey(&cfg.BusyXceivers, confPrefix+"load.busy-xceivers")
	floatKey(&cfg.BusyPendingPerNode, confPrefix+"load.busy-pending-per-node")
	floatKey(&cfg.MaxSpaceFraction, confPrefix+"max-space-fraction")
	bw := int(cfg.CopyBandwidth)
	intKey(&bw, confPrefix+"copy-bandwidth")
	cfg.CopyBandwidth = int64(bw)
	durKey(&cfg.ScheduleDelay, confPrefix+"schedule-delay")
	if v := c.String("dfs.namenode.redundancy.interval.seconds", ""); v != "" {
		// Hadoop's key is in seconds (a bare number, or with a time unit suffix).
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			cfg.RedundancyInterval = time.Duration(n) * time.Second
		} else if d, err := time.ParseDuration(strings.TrimSpace(v)); err == nil {
			cfg.RedundancyInterval = d
		}
	}
	durKey(&cfg.RedundancyInterval, confPrefix+"redundancy-interval")
	if b, err := c.Bool(confPrefix+"reactive", cfg.Reactive); err != nil {
		errs = append(errs, err)
	} else {
		cfg.Reactive = b
	}
	intKey(&cfg.ReactiveClients, confPrefix+"reactive.clients")
	durKey(&cfg.ReactiveWindow, confPrefix+"reactive.window")
	durKey(&cfg.ReactiveDuration, confPrefix+"reactive.duration")
	durKey(&cfg.ReactiveCooldown, confPrefix+"reactive.cooldown")
	intKey(&cfg.ReactiveMaxTracked, confPrefix+"reactive.max-tracked")
	cfg.ReactiveUser = strings.TrimSpace(c.String(confPrefix+"reactive.user", cfg.ReactiveUser))
	cfg.StateDir = c.String(confPrefix+"state.dir", cfg.StateDir)
	cfg.XAttrPrefix = c.String(confPrefix+"state.xattr-prefix", cfg.XAttrPrefix)
	intKey(&cfg.MaxXAttrBytes, confPrefix+"state.max-xattr-bytes", "dfs.namenode.fs-limits.max-xattr-size")
	durKey(&cfg.PollInterval, confPrefix+"poll-interval")
	durKey(&cfg.BoostMaxDuration, confPrefix+"boost.max-duration")

	boostKeys := map[string]string{
		KeyMaxStreamsHard: confPrefix + "boost.max-streams-hard-limit",
		KeyMaxStreams:     confPrefix + "boost.max-streams",
		KeyWorkMultiplier: confPrefix + "boost.work-multiplier",
	}
	var boost []BoostLimit
	for _, b := range cfg.Boost {
		intKey(&b.Value, boostKeys[b.Key])
		if b.Value > 0 {
			boost = append(boost, b)
		}
	}
	cfg.Boost = boost

	if len(errs) > 0 {
		return Config{}, fmt.Errorf("hotspot config: %w: %w", ErrBadConfig, errs[0])
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate reports the first inconsistent field.
func (c Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("hotspot config: %w: %s", ErrBadConfig, fmt.Sprintf(format, a...))
	}
	if len(c.AllowedPrefixes) == 0 {
		return bad("allowed-prefixes is empty")
	}
	for _, p := range c.AllowedPrefixes {
		if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
			return bad("allowed prefix %q is not a clean absolute path", p)
		}
	}
	switch {
	case c.MaxPaths < 1:
		return bad("max-paths %d < 1", c.MaxPaths)
	case c.MaxFiles < 1 || c.MaxFiles > 1000000:
		return bad("max-files %d outside [1, 1000000]", c.MaxFiles)
	case c.MaxActiveHintsPerUser < 1:
		return bad("max-active-hints.per-user %d < 1", c.MaxActiveHintsPerUser)
	case c.MaxActiveHints < 1:
		return bad("max-active-hints %d < 1", c.MaxActiveHints)
	case c.MaxLead < 0:
		return bad("max-lead %v < 0", c.MaxLead)
	case c.MaxDuration <= 0:
		return bad("max-duration %v <= 0", c.MaxDuration)
	case c.MinFactor < 1:
		return bad("min-factor %d < 1", c.MinFactor)
	case c.MaxFactorBusy < c.MinFactor:
		return bad("max-factor.busy %d < min-factor %d", c.MaxFactorBusy, c.MinFactor)
	case c.MaxFactorQuiet < c.MaxFactorBusy:
		return bad("max-factor.quiet %d < max-factor.busy %d", c.MaxFactorQuiet, c.MaxFactorBusy)
	case c.ReplicationMax < c.MinFactor || c.ReplicationMax > 32767:
		return bad("replication-max %d outside [min-factor, 32767]", c.ReplicationMax)
	case c.ReadersPerReplica < 1:
		return bad("readers-per-replica %d < 1", c.ReadersPerReplica)
	case c.BusyXceivers <= 0:
		return bad("load.busy-xceivers %v <= 0", c.BusyXceivers)
	case c.BusyPendingPerNode <= 0:
		return bad("load.busy-pending-per-node %v <= 0", c.BusyPendingPerNode)
	case c.MaxSpaceFraction <= 0 || c.MaxSpaceFraction > 1:
		return bad("max-space-fraction %v outside (0, 1]", c.MaxSpaceFraction)
	case c.CopyBandwidth <= 0:
		return bad("copy-bandwidth %d <= 0", c.CopyBandwidth)
	case c.RedundancyInterval <= 0:
		return bad("redundancy-interval %v <= 0", c.RedundancyInterval)
	case c.ScheduleDelay < 0:
		return bad("schedule-delay %v < 0", c.ScheduleDelay)
	case c.ReactiveClients < 2:
		return bad("reactive.clients %d < 2", c.ReactiveClients)
	case c.ReactiveWindow <= 0:
		return bad("reactive.window %v <= 0", c.ReactiveWindow)
	case c.ReactiveDuration <= 0 || c.ReactiveDuration > c.MaxDuration:
		return bad("reactive.duration %v outside (0, max-duration]", c.ReactiveDuration)
	case c.ReactiveCooldown < 0:
		return bad("reactive.cooldown %v < 0", c.ReactiveCooldown)
	case c.ReactiveMaxTracked < 1:
		return bad("reactive.max-tracked %d < 1", c.ReactiveMaxTracked)
	case c.Reactive && c.ReactiveUser == "":
		return bad("newtricks.hotspot.reactive is on but newtricks.hotspot.reactive.user is not set: implicit hints act as that HDFS user, with its rights only (never as the NameNode)")
	case !strings.HasPrefix(c.StateDir, "/") || path.Clean(c.StateDir) != c.StateDir:
		return bad("state.dir %q is not a clean absolute path", c.StateDir)
	case !strings.HasPrefix(c.XAttrPrefix, "user."):
		// The marker on a hinted file is written as the hint's user, who needs only write
		// access to the file for a user. xattr (trusted. is the superuser's alone).
		return bad("state.xattr-prefix %q must be in the user. namespace", c.XAttrPrefix)
	case c.MaxXAttrBytes < 1024:
		return bad("state.max-xattr-bytes %d < 1024", c.MaxXAttrBytes)
	case c.BoostMaxDuration < 0:
		return bad("boost.max-duration %v < 0", c.BoostMaxDuration)
	case c.PollInterval < 10*time.Millisecond:
		return bad("poll-interval %v < 10ms", c.PollInterval)
	}
	for _, b := range c.Boost {
		switch b.Key {
		case KeyMaxStreams, KeyMaxStreamsHard, KeyWorkMultiplier:
		default:
			return bad("boost key %q is not a replication limit", b.Key)
		}
		if b.Value < 1 {
			return bad("boost %s=%d < 1", b.Key, b.Value)
		}
	}
	return nil
}

// allowed reports whether p (clean, absolute) is under one of the allowed prefixes.
func (c Config) allowed(p string) bool {
	for _, pre := range c.AllowedPrefixes {
		if pre == "/" || p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}
