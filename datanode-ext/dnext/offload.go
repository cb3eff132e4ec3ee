package dnext

import (
	"context"
	"fmt"
	"time"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	"github.com/newtricks/newtricks/datanode-ext/offload"
	"github.com/newtricks/newtricks/internal/coproc"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// startOffload starts the governor and the session workers and registers the Offload service
// (package offload) on the public API server.
func (e *Ext) startOffload(ctx context.Context, env coproc.Env, host pb.DataNodeHostClient) error {
	gcfg, scfg, err := offload.ConfigFromConf(env.Conf)
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
	domain := env.Conf.String(offload.TestDomainKey, "")
	if domain != "" {
		if err := (&frame.Frame{Kind: frame.KindRaw, Domain: domain}).Validate(); err != nil {
			return fmt.Errorf("%w: %s: %v", coproc.ErrBadConfig, offload.TestDomainKey, err)
		}
		env.Log.Warn("TEST ONLY: this node reports a determinism domain that is not its own; readers will transform every sample themselves",
			"key", offload.TestDomainKey, "domain", domain)
	}
	var met *offload.Metrics
	mgr, err := offload.NewManager(scfg, offload.Options{
		Host: offload.GRPCHost{Client: host}, Peers: offload.NewGRPCPeers(), Gov: gov,
		Self: e.getUUID, Log: env.Log.Named("offload"), Domain: domain,
		Transformed: func(d time.Duration) { met.Observe(d) },
	})
	if err != nil {
		return err
	}
	met = offload.NewMetrics(mgr, gov)
	env.Registry.MustRegister(met.Collectors()...)
	mgr.Run(ctx)
	sv := &offload.Server{Sessions: mgr, Gov: gov, Version: Version, Log: env.Log.Named("offload"), Self: func() (string, string) {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.uuid, e.xfer
	}}
	sv.Register(env.API)
	env.Log.Info("offload ready", "cpu_high", gcfg.High, "cpu_low", gcfg.Low, "workers", scfg.Workers,
		"nice", scfg.Nice, "lookahead", scfg.Lookahead, "queue_max_bytes", scfg.QueueMaxBytes)
	return nil
}
