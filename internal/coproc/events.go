package coproc

import pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"

// EventSubscriber is implemented by a Component that consumes the NameNode hook's events
// (namenode-ext). Configure answers with what it subscribed to, so the hook forwards only that
// and does no per-operation work for anything else.
type EventSubscriber interface {
	EventFilter() *pb.EventFilter
}

// configureResponse is the answer to Configure once the component runs. Called with c.mu held.
func (c *Coprocess) configureResponse() *pb.ConfigureResponse {
	r := &pb.ConfigureResponse{ApiAddress: c.apiAddr, MetricsAddress: c.metricsAddr}
	if es, ok := c.comp.(EventSubscriber); ok {
		r.Events = es.EventFilter()
	}
	return r
}
