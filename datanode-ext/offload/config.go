package offload

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/xformgraph"
)

// ErrConfig is wrapped by configuration errors.
var ErrConfig = errors.New("offload: bad configuration")

// Prefix prefixes the offload keys in hdfs-site.xml (docs/offload.md lists them).
const Prefix = "newtricks.datanode.ext.offload"

// ReadMaxBytesKey bounds one sample's bytes here as it bounds one Replicas.Read (dnext).
const ReadMaxBytesKey = "newtricks.datanode.ext.read.max.bytes"

// DefaultMaxReadBytes is ReadMaxBytesKey's default.
const DefaultMaxReadBytes = 64 << 20

// DefaultMaxStep is step.max's default: 2^24 steps, about 5 s of one core to compute a
// session's first step from scratch (StepLimit).
const DefaultMaxStep = 1 << 24

// StepLimit is the first step a session of a schedule of n sources may not reach: MaxStep for
// up to 16 sources, MaxStep / (1 + n/16) with more. Computing a step from scratch costs about
// 0.25 us a step plus 18 ns a step and source on one core (and the plan keeps 8 bytes a source
// every 1024 steps), so at the default any session's first step costs at most about 5 s and
// 2 MiB.
func (c Config) StepLimit(n int) uint64 { return c.MaxStep / uint64(1+max(n, 0)/16) }

// TestDomainKey (test only) replaces the determinism domain the node reports and writes into
// its frames (Options.Domain), so that a test can run a node that looks built with other
// libraries.
const TestDomainKey = Prefix + ".test.domain"

// Config of the offload sessions of one node. Keys are under newtricks.datanode.ext.offload.
type Config struct {
	// Workers (workers, default 1) transform samples concurrently: the CPU budget in cores.
	Workers int
	// Nice (nice, default 10) is the scheduling niceness of the worker threads, so the
	// DataNode's block serving wins the CPU when both want it.
	Nice int
	// Lookahead (lookahead, default 4, at most MaxLookahead) steps are prepared ahead of the
	// last step a reader asked for, when the session does not say.
	Lookahead int
	// MaxLookahead (lookahead.max, default 64) bounds what a session may ask for.
	MaxLookahead int
	// QueueMaxBytes (queue.max.bytes, default 512 MiB) caps the transformed samples held
	// ready for all sessions; beyond it only the step a reader waits for is worked on.
	QueueMaxBytes int64
	// MaxSessions (sessions.max, default 64): open sessions of all users together.
	MaxSessions int
	// MaxSessionsPerUser (sessions.max.per.user, default 16): open sessions of one user.
	MaxSessionsPerUser int
	// MaxReadBytes (newtricks.datanode.ext.read.max.bytes, default 64 MiB) bounds the bytes of
	// one sample, read to transform it or to answer it raw; a longer sample is answered
	// UNAVAILABLE (the reader reads it from HDFS) before anything is read or allocated for it.
	MaxReadBytes int64
	// MaxReads (reads.max, default 8): raw answers, Replicas.Reads and index reads of opening
	// sessions being read at once, and as many ReadRanges served to peers; more wait.
	MaxReads int
	// Idle (session.idle.ms, default 10 min): a session not used for this long is closed.
	Idle time.Duration
	// MaxWait (max.wait.ms, default 5 s): the default and the cap of GetStepRequest.max_wait_ms.
	MaxWait time.Duration
	// MaxMembers (members.max, default 256).
	MaxMembers int
	// MaxStep (step.max, default DefaultMaxStep, at most 2^62) bounds the steps a session
	// serves (StepLimit): a start step or a GetStep step at or beyond it is refused. A step's
	// samples depend on every step before it (docs/offload.md, "The exact algorithm": the
	// cursor), so the first step of a session costs time in proportion to its number; without
	// a bound one request made the node compute for ever, and under the Manager's lock.
	MaxStep uint64
	// PeerConns (peers.max, default 64) bounds the connections kept to other datanode-ext
	// nodes; PeerIdle (peers.idle.ms, default 120000) closes one unused for that long.
	PeerConns int
	PeerIdle  time.Duration
	// Limits bound every transform (pixels, frames, bytes); zero fields take xformgraph's
	// defaults, and a graph's own limits can only tighten them.
	Limits xformgraph.Limits
}

// Defaults fills zero fields.
func (c Config) Defaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Workers, 1)
	def(&c.Lookahead, 4)
	def(&c.MaxLookahead, 64)
	def(&c.MaxSessions, 64)
	def(&c.MaxSessionsPerUser, 16)
	def(&c.MaxReads, 8)
	if c.MaxReadBytes == 0 {
		c.MaxReadBytes = DefaultMaxReadBytes
	}
	def(&c.MaxMembers, 256)
	if c.MaxStep == 0 {
		c.MaxStep = DefaultMaxStep
	}
	def(&c.PeerConns, DefaultPeerConns)
	if c.PeerIdle == 0 {
		c.PeerIdle = DefaultPeerIdle
	}
	if c.QueueMaxBytes == 0 {
		c.QueueMaxBytes = 512 << 20
	}
	if c.Idle == 0 {
		c.Idle = 10 * time.Minute
	}
	if c.MaxWait == 0 {
		c.MaxWait = 5 * time.Second
	}
	return c
}

// Validate checks ranges.
func (c Config) Validate() error {
	switch {
	case c.Workers < 1 || c.Workers > 256:
		return fmt.Errorf("%w: workers %d must be in [1, 256]", ErrConfig, c.Workers)
	case c.Nice < 0 || c.Nice > 19:
		return fmt.Errorf("%w: nice %d must be in [0, 19]", ErrConfig, c.Nice)
	case c.MaxLookahead < 1 || c.MaxLookahead > 1024 || c.Lookahead < 1 || c.Lookahead > c.MaxLookahead:
		return fmt.Errorf("%w: lookahead %d must be in [1, lookahead.max=%d <= 1024]", ErrConfig, c.Lookahead, c.MaxLookahead)
	case c.QueueMaxBytes < 1<<20:
		return fmt.Errorf("%w: queue.max.bytes %d must be at least 1 MiB", ErrConfig, c.QueueMaxBytes)
	case c.MaxSessions < 1 || c.MaxMembers < 1 || c.MaxSessionsPerUser < 1:
		return fmt.Errorf("%w: sessions.max, sessions.max.per.user and members.max must be positive", ErrConfig)
	case c.MaxReads < 1 || c.MaxReads > 1024:
		return fmt.Errorf("%w: reads.max %d must be in [1, 1024]", ErrConfig, c.MaxReads)
	case c.MaxReadBytes < 1 || c.MaxReadBytes > 1<<30:
		return fmt.Errorf("%w: %s=%d must be in [1, 1 GiB]", ErrConfig, ReadMaxBytesKey, c.MaxReadBytes)
	case c.Idle < time.Second || c.MaxWait < time.Millisecond:
		return fmt.Errorf("%w: session.idle.ms >= 1000 and max.wait.ms >= 1", ErrConfig)
	case c.MaxStep > 1<<62:
		return fmt.Errorf("%w: step.max %d must be at most 2^62", ErrConfig, c.MaxStep)
	case c.PeerConns < 1 || c.PeerConns > 4096 || c.PeerIdle < time.Second:
		return fmt.Errorf("%w: peers.max %d must be in [1, 4096] and peers.idle.ms >= 1000", ErrConfig, c.PeerConns)
	}
	return nil
}

// ConfigFromConf reads the offload keys: the governor's
// (cpu.high 0.8, cpu.low 0.7, cpu.interval.ms 500) and the sessions' (workers 1, nice 10,
// lookahead 4, lookahead.max 64, queue.max.bytes 512 MiB, sessions.max 64,
// sessions.max.per.user 16, reads.max 8, session.idle.ms 600000, max.wait.ms 5000,
// members.max 256, step.max 2^24, peers.max 64, peers.idle.ms 120000; and
// newtricks.datanode.ext.read.max.bytes, 64 MiB). Both come back with their
// defaults filled and validated; every error wraps coproc.ErrBadConfig.
func ConfigFromConf(c coproc.Conf) (governor.Config, Config, error) {
	var g governor.Config
	var s Config
	var err error
	float := func(key string, dst *float64) {
		if err != nil {
			return
		}
		v := c.String(Prefix+key, "")
		if v == "" {
			return
		}
		if *dst, err = strconv.ParseFloat(v, 64); err != nil {
			err = fmt.Errorf("%w: %s%s=%q is not a number", coproc.ErrBadConfig, Prefix, key, v)
		}
	}
	integer := func(key string, dst *int) {
		if err != nil {
			return
		}
		var n int64
		n, err = c.Int(Prefix+key, int64(*dst))
		*dst = int(n)
	}
	float(".cpu.high", &g.High)
	float(".cpu.low", &g.Low)
	if err == nil {
		g.Interval, err = c.Duration(Prefix+".cpu.interval.ms", 0)
	}
	s.Nice = 10
	integer(".workers", &s.Workers)
	integer(".nice", &s.Nice)
	integer(".lookahead", &s.Lookahead)
	integer(".lookahead.max", &s.MaxLookahead)
	integer(".sessions.max", &s.MaxSessions)
	integer(".members.max", &s.MaxMembers)
	if err == nil {
		var n int64
		if n, err = c.Int(Prefix+".step.max", 0); err == nil && n < 0 {
			err = fmt.Errorf("%w: %s.step.max=%d is negative", coproc.ErrBadConfig, Prefix, n)
		}
		s.MaxStep = uint64(n)
	}
	integer(".peers.max", &s.PeerConns)
	if err == nil {
		s.PeerIdle, err = c.Duration(Prefix+".peers.idle.ms", 0)
	}
	integer(".sessions.max.per.user", &s.MaxSessionsPerUser)
	integer(".reads.max", &s.MaxReads)
	if err == nil {
		s.QueueMaxBytes, err = c.Int(Prefix+".queue.max.bytes", 0)
	}
	if err == nil {
		s.MaxReadBytes, err = c.Int(ReadMaxBytesKey, 0)
	}
	if err == nil {
		s.Idle, err = c.Duration(Prefix+".session.idle.ms", 0)
	}
	if err == nil {
		s.MaxWait, err = c.Duration(Prefix+".max.wait.ms", 0)
	}
	if err != nil {
		return g, s, err
	}
	g, s = g.Defaults(), s.Defaults()
	if err := g.Validate(); err != nil {
		return g, s, fmt.Errorf("%w: %v", coproc.ErrBadConfig, err)
	}
	if err := s.Validate(); err != nil {
		return g, s, fmt.Errorf("%w: %v", coproc.ErrBadConfig, err)
	}
	return g, s, nil
}
