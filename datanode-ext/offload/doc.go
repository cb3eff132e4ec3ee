// Package offload is datanode-ext's side of offload (docs/offload.md): the public Offload
// service (proto newtricks.v1.Offload) that lets a trainer's reader have samples transformed
// next to their replicas.
//
// A reader opens a session (schedule, sources, rank, members); the node works out which
// samples of the next steps it owns, reads their bytes from its local replicas and from
// peers, and transforms them ahead of the reader into a bounded, memory-capped queue, with
// workers at a lower CPU priority than the DataNode. It reads sample bytes only through the
// DataNode's block-token check (Host), as the session's user, and through peers' ReadRange
// for the part of a sample stored elsewhere. When the governor sheds, or a transform is not
// done in time, samples go out as raw bytes that the reader transforms itself with the same
// graph.
//
// server.go is the gRPC edge (Server): every call resolves its user through internal/authn,
// hands the work to the Manager and maps its sentinel errors to gRPC codes. It also holds the
// client side of peer range reads (GRPCPeers).
package offload
