// Command stallext is a misbehaving namenode-ext for fault tests: it completes the go-plugin
// handshake, answers Configure and health checks, and then never finishes a Deliver, like a
// co-process that stopped reading its event stream.
package main

import (
	"context"

	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/internal/extplugin"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

type stalledSink struct {
	pb.UnimplementedEventSinkServer
}

func (stalledSink) Deliver(ctx context.Context, _ *pb.EventBatch) (*pb.DeliverAck, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

type nothing struct{}

func (nothing) Start(context.Context, coproc.Env) error { return nil }
func (nothing) Counters() coproc.Counters               { return coproc.Counters{LastTxid: -1} }

func main() {
	log := extplugin.NewLogger("stallext", "info")
	cp := coproc.New(coproc.Options{Name: "stallext", Prefix: "newtricks.namenode.ext"}, nothing{}, log)
	extplugin.Serve("namenode-ext", log, func(s *grpc.Server) {
		cp.Register(s)
		pb.RegisterEventSinkServer(s, stalledSink{})
	})
}
