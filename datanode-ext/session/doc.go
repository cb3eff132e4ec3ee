// Package session is the consumer side of offload inside datanode-ext: a reader's session
// (schedule, sources, rank, members), the samples of the next steps this node owns, the
// bounded, memory-capped queue of transformed samples for steps N+1..N+k, and the transform
// workers that fill it at a lower CPU priority. It reads sample bytes only through the
// DataNode's block-token check (Host), as the session's user, and through peers' ReadRange for
// the part of a sample stored elsewhere. When the governor sheds, or a transform is not done in
// time, samples go out as raw bytes that the reader transforms itself with the same graph.
package session
