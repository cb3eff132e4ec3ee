package nnext

import (
	"context"
	"fmt"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/events"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/mirror"
	"github.com/newtricks/newtricks/namenode-ext/nnhost"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// startSubsystems sets up the subsystems that act on the NameNode and serve their own APIs
// (hints, the mirror): their services are registered once and switch with the NameNode's
// active terms (terms), each term running subsystems of its own. The first term's are built
// here, so a configuration they refuse fails Configure. They reach the NameNode through host,
// the hook's host service in nnhost's types.
func startSubsystems(ctx context.Context, env coproc.Env, cfg Config, host *nnhost.Client, sink *events.Sink) (*terms, error) {
	hcfg, err := hotspot.ConfigFromMap(env.Conf)
	if err != nil {
		return nil, fmt.Errorf("hotspot: %w", err)
	}
	mcfg, err := mirror.ConfigFromMap(env.Conf)
	if err != nil {
		return nil, err
	}
	build := func(first bool) (*termParts, error) {
		hs, err := hotspot.New(hcfg, host, env.Log.Named("hotspot"))
		if err != nil {
			return nil, fmt.Errorf("hotspot: %w", err)
		}
		p := &termParts{hotspot: hs, reactive: hcfg.Reactive}
		if len(mcfg.Rules) > 0 {
			if p.mirror, err = mirror.New(mcfg, host, env.Log.Named("mirror")); err != nil {
				return nil, err
			}
		}
		return p, nil
	}
	first, err := build(true)
	if err != nil {
		return nil, err
	}
	if hcfg.Reactive {
		// Reactive hints are the only consumer of audit events today. A file opened fewer
		// than K times within W cannot fire (K distinct clients are needed), so the hook
		// holds each file's opens until it has seen K of them within W (with K = 1 that is
		// every open). Wanted for the life of the process: the hook's filter stays the same
		// across terms.
		sink.Want(events.Interest{
			Audit:             []string{"open"},
			AuditMinRepeats:   hcfg.ReactiveClients,
			AuditRepeatWindow: hcfg.ReactiveWindow,
		})
	}
	if len(mcfg.Rules) > 0 {
		sink.Want(mirror.InterestOf(mcfg))
	}
	t := newTerms(ctx, host, sink, build, cfg.EventsStateDir, cfg.EventsPersist,
		env.Conf.String("dfs.namenode.rpc-address", ""), env.Log.Named("terms"))
	pb.RegisterHintsServer(env.API, hintsSwitch{t: t})
	if len(mcfg.Rules) > 0 {
		pb.RegisterMirrorServer(env.API, mirrorSwitch{t: t})
	}
	env.Registry.MustRegister(termCollector{t: t})
	// The first term's subsystems see the stream from the hook's first batch on.
	t.attach(first)
	go t.run(first)
	return t, nil
}
