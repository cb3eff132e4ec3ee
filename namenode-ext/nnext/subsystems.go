package nnext

import (
	"context"
	"fmt"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/events"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/mirror"
	"github.com/newtricks/newtricks/namenode-ext/nnhost"
)

// startSubsystems starts the subsystems that act on events and serve their own APIs. They
// reach the NameNode through host, the hook's host service in nnhost's types.
func startSubsystems(ctx context.Context, env coproc.Env, host *nnhost.Client, sink *events.Sink) error {
	hcfg, err := hotspot.ConfigFromMap(env.Conf)
	if err != nil {
		return fmt.Errorf("hotspot: %w", err)
	}
	hs, err := hotspot.New(hcfg, host, env.Log.Named("hotspot"))
	if err != nil {
		return fmt.Errorf("hotspot: %w", err)
	}
	hs.RegisterGRPC(env.API)
	env.Registry.MustRegister(hs.Collectors()...)
	if hcfg.Reactive {
		// Reactive hints are the only consumer of audit events today. A file opened fewer
		// than K times within W cannot fire (K distinct clients are needed), so the hook
		// holds each file's opens until it has seen K of them within W (with K = 1 that is
		// every open).
		sink.Want(events.Interest{
			Audit:             []string{"open"},
			AuditMinRepeats:   hcfg.ReactiveClients,
			AuditRepeatWindow: hcfg.ReactiveWindow,
		})
	}
	unsubscribe := sink.Subscribe(func(e events.Event) {
		if a := e.Audit; a != nil && a.Allowed {
			hs.ObserveAudit(a.Cmd, a.Src, a.User, a.ClientIP, a.Time)
		}
	})
	go func() {
		defer unsubscribe() // a Configure that failed after this point leaves nothing behind
		if err := hs.Run(ctx); err != nil && ctx.Err() == nil {
			env.Log.Error("hotspot stopped", "error", err)
		}
	}()
	return startMirror(ctx, env, host, sink)
}

// startMirror starts checkpoint mirroring when newtricks.mirror.rules names rules.
func startMirror(ctx context.Context, env coproc.Env, host *nnhost.Client, sink *events.Sink) error {
	mcfg, err := mirror.ConfigFromMap(env.Conf)
	if err != nil {
		return err
	}
	if len(mcfg.Rules) == 0 {
		return nil
	}
	m, err := mirror.New(mcfg, host, env.Log.Named("mirror"))
	if err != nil {
		return err
	}
	m.RegisterGRPC(env.API)
	env.Registry.MustRegister(m.Collectors()...)
	// The hook resumes the event stream after what the mirror's journal holds (nothing is
	// durable until the journal is read).
	cursor := sink.NewCursor(-1)
	m.UseCursor(cursor)
	withdraw := sink.Want(m.Interest())
	unsubscribe := sink.Subscribe(m.Observe)
	go func() {
		defer cursor.Close()
		defer withdraw()
		defer unsubscribe()
		if err := m.Run(ctx); err != nil && ctx.Err() == nil {
			env.Log.Error("mirror stopped", "error", err)
		}
	}()
	return nil
}
