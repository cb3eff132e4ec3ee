package dnext

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	"github.com/newtricks/newtricks/datanode-ext/session"
	"github.com/newtricks/newtricks/datanode-ext/transformsvc"
	"github.com/newtricks/newtricks/internal/coproc"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// OffloadPrefix prefixes the offload keys (docs/offload.md lists them).
const OffloadPrefix = Prefix + ".offload"

// OffloadTestDomainKey (test only) replaces the determinism domain the node reports and
// writes into its frames, so that a test can run a node that looks built with other
// libraries.
const OffloadTestDomainKey = OffloadPrefix + ".test.domain"

// OffloadConfig reads the offload keys: the governor's
// (cpu.high 0.8, cpu.low 0.7, cpu.interval.ms 500) and the sessions' (workers 1, nice 10,
// lookahead 4, lookahead.max 64, queue.max.bytes 512 MiB, sessions.max 64,
// session.idle.ms 600000, max.wait.ms 5000, members.max 256).
func OffloadConfig(c coproc.Conf) (governor.Config, session.Config, error) {
	var g governor.Config
	var s session.Config
	var err error
	float := func(key string, dst *float64) {
		if err != nil {
			return
		}
		v := c.String(OffloadPrefix+key, "")
		if v == "" {
			return
		}
		if *dst, err = strconv.ParseFloat(v, 64); err != nil {
			err = fmt.Errorf("%w: %s%s=%q is not a number", coproc.ErrBadConfig, OffloadPrefix, key, v)
		}
	}
	integer := func(key string, dst *int) {
		if err != nil {
			return
		}
		var n int64
		n, err = c.Int(OffloadPrefix+key, int64(*dst))
		*dst = int(n)
	}
	float(".cpu.high", &g.High)
	float(".cpu.low", &g.Low)
	if err == nil {
		g.Interval, err = c.Duration(OffloadPrefix+".cpu.interval.ms", 0)
	}
	s.Nice = 10
	integer(".workers", &s.Workers)
	integer(".nice", &s.Nice)
	integer(".lookahead", &s.Lookahead)
	integer(".lookahead.max", &s.MaxLookahead)
	integer(".sessions.max", &s.MaxSessions)
	integer(".members.max", &s.MaxMembers)
	if err == nil {
		s.QueueMaxBytes, err = c.Int(OffloadPrefix+".queue.max.bytes", 0)
	}
	if err == nil {
		s.Idle, err = c.Duration(OffloadPrefix+".session.idle.ms", 0)
	}
	if err == nil {
		s.MaxWait, err = c.Duration(OffloadPrefix+".max.wait.ms", 0)
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

// startOffload starts the governor and the session workers and registers the Offload service.
func (e *Ext) startOffload(ctx context.Context, env coproc.Env, host pb.DataNodeHostClient) error {
	gcfg, scfg, err := OffloadConfig(env.Conf)
	if err != nil {
		return err
	}
	smp, err := governor.NewSystemSampler()
	if err != nil {
		return err
	}
	gov, err := governor.New(gcfg, smp)
	if err != nil {
		return err
	}
	go gov.Run(ctx)
	// Test only: play a DataNode built with other libraries (conformance's determinism-domain
	// case). Never set on a real cluster: readers would transform everything themselves.
	domain := env.Conf.String(OffloadTestDomainKey, "")
	if domain != "" {
		if err := (&frame.Frame{Kind: frame.KindRaw, Domain: domain}).Validate(); err != nil {
			return fmt.Errorf("%w: %s: %v", coproc.ErrBadConfig, OffloadTestDomainKey, err)
		}
		env.Log.Warn("TEST ONLY: this node reports a determinism domain that is not its own; readers will transform every sample themselves",
			"key", OffloadTestDomainKey, "domain", domain)
	}
	var met *offloadMetrics
	mgr, err := session.NewManager(scfg, session.Options{
		Host: session.GRPCHost{Client: host}, Peers: transformsvc.NewPeers(), Gov: gov,
		Self: e.getUUID, Log: env.Log.Named("offload"), Domain: domain,
		Transformed: func(d time.Duration) { met.observe(d) },
	})
	if err != nil {
		return err
	}
	met = newOffloadMetrics(mgr, gov)
	env.Registry.MustRegister(met.collectors()...)
	mgr.Run(ctx)
	sv := &transformsvc.Server{Sessions: mgr, Gov: gov, Version: Version, Log: env.Log.Named("offload"), Self: func() (string, string) {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.uuid, e.xfer
	}}
	sv.Register(env.API)
	env.Log.Info("offload ready", "cpu_high", gcfg.High, "cpu_low", gcfg.Low, "workers", scfg.Workers,
		"nice", scfg.Nice, "lookahead", scfg.Lookahead, "queue_max_bytes", scfg.QueueMaxBytes)
	return nil
}
