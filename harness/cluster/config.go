package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// HadoopVersion is the Hadoop release that `make hadoop` resolves (mk/hadoop.mk).
const HadoopVersion = "3.4.2"

// Defaults applied by Config.withDefaults.
const (
	DefaultName         = "local"
	DefaultDataNodes    = 3
	DefaultNameNodeHeap = "512m"
	DefaultDataNodeHeap = "256m"
	// DefaultSmallHeap is the -Xmx of an HA cluster's JournalNodes, ZKFCs and ZooKeeper.
	DefaultSmallHeap      = "64m"
	DefaultStartupTimeout = 90 * time.Second
	DefaultStopGrace      = 5 * time.Second
)

// Config describes one cluster. The zero value plus a BaseDir is a valid 1 NameNode +
// 3 DataNode cluster.
type Config struct {
	// Name identifies the cluster in logs and state ("dc-a", "dc-b"). Default "local".
	Name string
	// DataNodes is the number of DataNodes to start. Default 3; 0 means the default, use
	// NoDataNodes for a NameNode alone.
	DataNodes int
	// NoDataNodes starts only the NameNode (DataNodes is ignored).
	NoDataNodes bool
	// BaseDir holds every conf, data and log dir of the cluster (see the package doc).
	// Required. Distinct clusters need distinct base dirs.
	BaseDir string
	// HadoopLib is the directory of Hadoop jars. Default DefaultHadoopLib().
	HadoopLib string
	// ExtraClasspath entries are appended to every daemon's classpath (the hooks jar).
	ExtraClasspath []string
	// CoreSite overrides core-site.xml keys of every daemon.
	CoreSite map[string]string
	// HDFSSite overrides hdfs-site.xml keys of every daemon (e.g. dfs.namenode.plugins,
	// dfs.blocksize). Applied after the harness defaults.
	HDFSSite map[string]string
	// NameNodeSite overrides hdfs-site.xml keys of the NameNode only (of both NameNodes of an
	// HA cluster, and their ZKFCs). Applied after HDFSSite.
	NameNodeSite map[string]string
	// NameNodeSiteFor, if set, returns hdfs-site.xml overrides for NameNode i of an HA
	// cluster (0 for the NameNode of a cluster without HA), e.g. each NameNode's own
	// co-process ports. Applied after NameNodeSite.
	NameNodeSiteFor func(i int) map[string]string
	// HA, if set, makes the cluster a nameservice of two NameNodes over three JournalNodes
	// (see HAConfig); nil is one NameNode.
	HA *HAConfig
	// DataNodeSite, if set, returns hdfs-site.xml overrides for DataNode i (0-based), e.g.
	// dfs.datanode.data.read.bandwidthPerSec on one node. Applied after HDFSSite.
	DataNodeSite func(i int) map[string]string
	// Java is the java executable. Default $JAVA_HOME/bin/java if JAVA_HOME is set in Env or
	// the environment, else "java" from PATH.
	Java string
	// NameNodeHeap and DataNodeHeap are -Xmx values. Defaults 512m and 256m.
	NameNodeHeap string
	DataNodeHeap string
	// SmallHeap is the -Xmx of JournalNodes, ZKFCs and ZooKeeper. Default DefaultSmallHeap.
	SmallHeap string
	// JavaOpts are extra JVM options for every daemon, after the harness's own (a later
	// option wins, so they can override the harness's).
	JavaOpts []string
	// FullJIT keeps the JVM's full tiered JIT (C2). By default daemons run with
	// -XX:TieredStopAtLevel=1 (C1 only), which halves the CPU a cluster burns to start
	// (measured: ~15 s instead of ~25-30 s of CPU for 1 NameNode + 3 DataNodes) at the cost
	// of peak Java throughput. Benchmarks that measure the JVM itself (NNThroughputBenchmark)
	// should set it.
	FullJIT bool
	// NoCDS disables class data sharing (see cds.go: a Hadoop class archive built on first
	// use under the Hadoop cache dir, which cuts start-up CPU by ~40%).
	NoCDS bool
	// Env holds extra "KEY=value" entries for every daemon's environment, on top of the
	// harness process's environment.
	Env []string
	// StartupTimeout bounds Start (format, launch, safe mode off, DataNodes live) and
	// RestartNameNode. Default 90s.
	StartupTimeout time.Duration
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL. Default 5s.
	StopGrace time.Duration
	// Detached starts daemons that outlive this process (the CLI): no Pdeathsig and no
	// reaping. Stop still kills them; Attach finds them again from state.json.
	Detached bool
	// Progress, if set, is called as Start and RestartNameNode advance (see StartStep), from
	// the starting goroutine; it must return quickly.
	Progress func(StartStep)
}

// ErrInvalidConfig is wrapped by every Validate error.
var ErrInvalidConfig = errors.New("invalid cluster config")

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Validate reports the first problem of c after defaults are applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case !nameRE.MatchString(c.Name):
		return fmt.Errorf("%w: name %q: want letters, digits, '.', '_' or '-'", ErrInvalidConfig, c.Name)
	case c.BaseDir == "":
		return fmt.Errorf("%w: BaseDir is required", ErrInvalidConfig)
	case c.DataNodes < 0 || c.DataNodes > 64:
		return fmt.Errorf("%w: DataNodes %d: want 0..64", ErrInvalidConfig, c.DataNodes)
	case c.HadoopLib == "":
		return fmt.Errorf("%w: HadoopLib is required (run `make hadoop`)", ErrInvalidConfig)
	case c.StartupTimeout <= 0:
		return fmt.Errorf("%w: StartupTimeout must be positive", ErrInvalidConfig)
	case c.HA != nil && !nameserviceRE.MatchString(c.HA.Nameservice):
		return fmt.Errorf("%w: nameservice %q: want lower-case letters, digits and '-'", ErrInvalidConfig, c.HA.Nameservice)
	case c.HA != nil && c.HA.Manual && c.HA.ZKSessionTimeout != 0:
		return fmt.Errorf("%w: ZKSessionTimeout needs automatic failover (Manual is set)", ErrInvalidConfig)
	}
	return nil
}

// withDefaults returns c with every unset field defaulted.
func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.NoDataNodes {
		c.DataNodes = 0
	} else if c.DataNodes == 0 {
		c.DataNodes = DefaultDataNodes
	}
	if c.HadoopLib == "" {
		c.HadoopLib = DefaultHadoopLib()
	}
	if c.BaseDir != "" {
		c.BaseDir = absPath(c.BaseDir)
	}
	// Daemons run in their own directories: make every path absolute.
	if len(c.ExtraClasspath) > 0 {
		cp := make([]string, len(c.ExtraClasspath))
		for i, e := range c.ExtraClasspath {
			cp[i] = absPath(e)
		}
		c.ExtraClasspath = cp
	}
	if c.HadoopLib != "" {
		c.HadoopLib = absPath(c.HadoopLib)
	}
	if c.NameNodeHeap == "" {
		c.NameNodeHeap = DefaultNameNodeHeap
	}
	if c.DataNodeHeap == "" {
		c.DataNodeHeap = DefaultDataNodeHeap
	}
	if c.SmallHeap == "" {
		c.SmallHeap = DefaultSmallHeap
	}
	if c.HA != nil {
		ha := *c.HA
		if ha.Nameservice == "" {
			ha.Nameservice = DefaultNameservice
		}
		c.HA = &ha
	}
	if c.StartupTimeout == 0 {
		c.StartupTimeout = DefaultStartupTimeout
	}
	if c.StopGrace == 0 {
		c.StopGrace = DefaultStopGrace
	}
	if c.Java == "" {
		c.Java = "java"
		home := envLookup(c.Env, "JAVA_HOME")
		if home == "" {
			home = os.Getenv("JAVA_HOME")
		}
		if home != "" {
			c.Java = filepath.Join(home, "bin", "java")
		}
	}
	return c
}

// DefaultCacheDir is where `make` puts downloads: $NEWTRICKS_CACHE, else
// ~/.cache/newtricks (the top Makefile's CACHE).
func DefaultCacheDir() string {
	if d := os.Getenv("NEWTRICKS_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "newtricks-cache")
	}
	return filepath.Join(home, ".cache", "newtricks")
}

// DefaultHadoopLib is the jar directory `make hadoop` fills: $NEWTRICKS_HADOOP_LIB if set
// (`make test` sets it), else DefaultCacheDir()/hadoop-<HadoopVersion>/lib.
func DefaultHadoopLib() string {
	if d := os.Getenv("NEWTRICKS_HADOOP_LIB"); d != "" {
		return d
	}
	return filepath.Join(DefaultCacheDir(), "hadoop-"+HadoopVersion, "lib")
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func envLookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if len(env[i]) > len(key) && env[i][:len(key)] == key && env[i][len(key)] == '=' {
			return env[i][len(key)+1:]
		}
	}
	return ""
}
