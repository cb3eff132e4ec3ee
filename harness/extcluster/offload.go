package extcluster

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// OffloadNodes are Offload clients of every datanode-ext of a cluster, in Layout.DataNodeAPI
// order, acting as one user: the set-up the offload conformance test, bench-offload and the
// demo share.
type OffloadNodes struct {
	Clients []pb.OffloadClient
	User    string
	conns   []*grpc.ClientConn
}

// DialOffload connects to every datanode-ext of lay and waits until each answers NodeStatus as
// user and namenode-ext's directory lists them all (or ctx ends).
func DialOffload(ctx context.Context, lay Layout, user string) (*OffloadNodes, error) {
	o := &OffloadNodes{User: user}
	for _, addr := range lay.DataNodeAPI {
		cc, err := Dial(addr)
		if err != nil {
			o.Close()
			return nil, err
		}
		o.conns = append(o.conns, cc)
		o.Clients = append(o.Clients, pb.NewOffloadClient(cc))
	}
	for i, c := range o.Clients {
		if err := WaitServing(ctx, func(ctx context.Context) error {
			_, err := c.NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: user})
			return err
		}); err != nil {
			o.Close()
			return nil, fmt.Errorf("datanode-ext %d (%s) offload: %w", i, lay.DataNodeAPI[i], err)
		}
	}
	nn, err := Dial(lay.NameNodeAPI)
	if err != nil {
		o.Close()
		return nil, err
	}
	defer nn.Close()
	if err := WaitDirectory(ctx, nn, user, len(lay.DataNodeAPI)); err != nil {
		o.Close()
		return nil, fmt.Errorf("namenode-ext directory: %w", err)
	}
	return o, nil
}

// Close closes the connections.
func (o *OffloadNodes) Close() {
	for _, cc := range o.conns {
		cc.Close()
	}
	o.conns = nil
}

// Status returns every node's status, in order; a node that did not answer has nil there
// and the first such failure is the error.
func (o *OffloadNodes) Status(ctx context.Context) ([]*pb.OffloadNodeStatus, error) {
	out := make([]*pb.OffloadNodeStatus, len(o.Clients))
	var first error
	for i, c := range o.Clients {
		st, err := c.NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: o.User})
		if err != nil && first == nil {
			first = fmt.Errorf("datanode-ext %d status: %w", i, err)
		}
		out[i] = st
	}
	return out, first
}

// SetGovernor sets every node's CPU thresholds (the user must be an HDFS administrator).
func (o *OffloadNodes) SetGovernor(ctx context.Context, high, low float64) error {
	for i, c := range o.Clients {
		if _, err := c.SetGovernor(ctx, &pb.SetGovernorRequest{User: o.User, ThresholdHigh: high, ThresholdLow: low}); err != nil {
			return fmt.Errorf("datanode-ext %d: set governor: %w", i, err)
		}
	}
	return nil
}

// WaitShedding waits until every node's governor reports shedding == want; the error names the
// CPU share the nodes last saw used by others.
func (o *OffloadNodes) WaitShedding(ctx context.Context, want bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		sts, err := o.Status(ctx)
		if err != nil {
			return err
		}
		all := true
		others := make([]string, len(sts))
		for i, st := range sts {
			all = all && st.GetShedding() == want
			others[i] = fmt.Sprintf("%.2f", st.GetCpuOther())
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("DataNodes shedding=%v not reached in %v (cpu_other %v)", want, timeout, others)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
