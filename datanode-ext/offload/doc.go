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
// The package's files:
//
//   - server.go: the gRPC edge (Server). Every call resolves its user through internal/authn,
//     converts the request (convert.go), calls the Manager and maps its errors to gRPC codes
//     (errors.go). Nothing else sees an Offload request or response message.
//   - session.go: opening a session (every check of the request before any work), closing,
//     expiry.
//   - queue.go: the jobs of the prepared steps and the workers that take them.
//   - step.go: answering a step: transformed frames when ready, raw bytes otherwise.
//   - read.go: reading byte ranges of a session's files and serving ReadRange.
//   - clients.go: the gRPC clients of the DataNode's host service and of the peers.
//   - manager.go, config.go, metrics.go: the node-wide state, its keys and its metrics.
//
// The block maps (LocatedBlocks, as Namespace.Locate returned them with the caller's tokens)
// keep their wire type inside: the dataset package computes ownership and pieces on them
// (dataset.StepOwners, dataset.Pieces, the code the reader runs too, so that both agree), and
// a block goes back verbatim to the DataNode's token check and to the peers.
package offload
