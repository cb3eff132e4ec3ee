// Command stallext is a misbehaving namenode-ext for fault tests: it completes the go-plugin
// handshake, answers Configure (subscribing to every getfileinfo and open audit event) and
// health checks, acknowledges the first few event batches, and then never finishes a Deliver,
// like a co-process that stopped reading its event stream.
package main

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/internal/extplugin"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// ackFirst batches with events are acknowledged before the sink stalls. The hook's empty
// heartbeat batches are acknowledged until then but do not count: a cluster slow to come up
// sends several before the test's first audited call, and counting them would stall the sink
// before it acknowledged anything.
const ackFirst = 3

type stalledSink struct {
	pb.UnimplementedEventSinkServer
	delivered atomic.Int64
}

func (s *stalledSink) Deliver(ctx context.Context, b *pb.EventBatch) (*pb.DeliverAck, error) {
	if len(b.GetEvents()) == 0 && s.delivered.Load() < ackFirst {
		return &pb.DeliverAck{LastTxid: -1, DurableTxid: -1}, nil
	}
	if len(b.GetEvents()) > 0 && s.delivered.Add(1) <= ackFirst {
		return &pb.DeliverAck{LastTxid: -1, DurableTxid: -1}, nil
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

type nothing struct{}

func (nothing) Start(context.Context, coproc.Env) error { return nil }
func (nothing) Counters() coproc.Counters               { return coproc.Counters{LastTxid: -1} }

// EventFilter subscribes to the calls the stall test makes, so the hook queues them.
func (nothing) EventFilter() *pb.EventFilter {
	return &pb.EventFilter{AuditCommands: []string{"getfileinfo", "open"}}
}

func main() {
	log := extplugin.NewLogger("stallext", "info")
	cp := coproc.New(coproc.Options{Name: "stallext", Prefix: "newtricks.namenode.ext"}, nothing{}, log)
	extplugin.Serve("namenode-ext", log, func(s *grpc.Server) {
		cp.Register(s)
		pb.RegisterEventSinkServer(s, &stalledSink{})
	})
}
