package dnext

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	"github.com/newtricks/newtricks/datanode-ext/offload"
	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// startOffload starts the governor and the session workers and registers the Offload service
// (package offload) on the public API server. Its samples are bounded by read.max.bytes as
// Replicas.Read is.
func (e *Ext) startOffload(ctx context.Context, env coproc.Env, host pb.DataNodeHostClient, dcfg Config) (*offload.Manager, error) {
	gcfg, scfg, err := offload.ConfigFromConf(env.Conf)
	if err != nil {
		return nil, err
	}
	scfg.MaxReadBytes = dcfg.MaxReadBytes
	smp, err := governor.NewSystemSampler()
	if err != nil {
		return nil, err
	}
	gov, err := governor.New(gcfg, smp)
	if err != nil {
		return nil, err
	}
	go gov.Run(ctx)
	// Test only: play a DataNode built with other libraries (conformance's determinism-domain
	// case). Never set on a real cluster: readers would transform everything themselves.
	domain := env.Conf.String(offload.TestDomainKey, "")
	if domain != "" {
		if err := (&frame.Frame{Kind: frame.KindRaw, Domain: domain}).Validate(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", coproc.ErrBadConfig, offload.TestDomainKey, err)
		}
		env.Log.Warn("TEST ONLY: this node reports a determinism domain that is not its own; readers will transform every sample themselves",
			"key", offload.TestDomainKey, "domain", domain)
	}
	apiHost, _, _ := net.SplitHostPort(Options.APIAddress(env.Conf))
	auth, err := newClientAuth(env.Conf, dcfg, apiHost)
	if err != nil {
		return nil, err
	}
	var met *offload.Metrics
	peers := &offload.GRPCPeers{Options: auth.forPeer, Max: scfg.PeerConns, Idle: scfg.PeerIdle, Log: env.Log.Named("peers")}
	opts := offload.Options{
		Host: offload.GRPCHost{Client: host}, Peers: peers, Gov: gov,
		Self: e.getUUID, Log: env.Log.Named("offload"), Domain: domain,
		Transformed: func(d time.Duration) { met.Observe(d) },
	}
	if len(dcfg.NameNodeAPI) > 0 {
		nn, err := offload.NewNameNodeExt(dcfg.NameNodeAPI, auth.forNameNode, auth.self(), env.Log.Named("namenode-ext"))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", coproc.ErrBadConfig, KeyNameNodeAPI, err)
		}
		opts.Namespace, opts.Directory = nn, nn
		e.mu.Lock()
		e.nn, e.apiTLS = nn, authn.ConfigFrom(func(k string) string { return env.Conf[k] }, Prefix).TLSCert != ""
		e.mu.Unlock()
	} else {
		env.Log.Warn("offload sessions are refused: set " + KeyNameNodeAPI + " to namenode-ext's address, through which datanode-ext locates datasets and finds the other DataNodes")
	}
	go func() {
		<-ctx.Done()
		peers.Close()
		auth.close()
	}()
	mgr, err := offload.NewManager(scfg, opts)
	if err != nil {
		return nil, err
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
		"nice", scfg.Nice, "lookahead", scfg.Lookahead, "queue_max_bytes", scfg.QueueMaxBytes,
		"sessions_max", scfg.MaxSessions, "sessions_max_per_user", scfg.MaxSessionsPerUser, "reads_max", scfg.MaxReads,
		"read_max_bytes", scfg.MaxReadBytes)
	return mgr, nil
}

// APIServing implements coproc.APIListener: once the public API listens, this node registers
// it (its port, and whether it serves TLS) in namenode-ext's directory, and renews it for as
// long as it runs, so that readers and peers find it there.
func (e *Ext) APIServing(ctx context.Context, addr string) {
	e.mu.Lock()
	nn, tls := e.nn, e.apiTLS
	e.mu.Unlock()
	_, p, err := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	if nn == nil || err != nil || port == 0 {
		return
	}
	go e.register(ctx, nn, port, tls)
}

func (e *Ext) register(ctx context.Context, nn *offload.NameNodeExt, port int, tls bool) {
	failing, registered := false, false
	for delay := 200 * time.Millisecond; ; {
		if uuid := e.getUUID(); uuid != "" {
			renew, err := nn.Register(ctx, uuid, port, tls)
			switch {
			case err != nil && !failing:
				e.log().Warn("cannot register in namenode-ext's directory; retrying (readers and peers do not find this node meanwhile)", "error", err)
				failing = true
			case err == nil && (failing || !registered):
				e.log().Info("registered in namenode-ext's directory", "datanode", uuid, "port", port, "tls", tls, "renew", renew)
				failing, registered = false, true
			}
			delay = renew
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}
