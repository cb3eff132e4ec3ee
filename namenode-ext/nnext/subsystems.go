package nnext

import (
	"context"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/events"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// startSubsystems starts the subsystems that act on events and serve their own APIs.
func startSubsystems(ctx context.Context, env coproc.Env, host pb.NameNodeHostClient, sink *events.Sink) error {
	return nil
}
