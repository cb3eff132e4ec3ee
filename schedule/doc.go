// Package schedule computes which samples every rank of a training job reads at every step,
// from a declarative spec shared by the trainer's readers and the DataNodes (schedule
// synchronization): sources with mixing weights that may change by step (curriculum), a
// seed, the global batch and the world size, or explicit per-step sample lists.
//
// Everything is a pure function of (spec, step, rank) and the number of samples of each
// source: a node that joins late, a reader that resumes at step 1,000,000 and a DataNode
// preparing the next steps all compute the same samples, without exchanging state. The
// per-source state is a few integers (no shuffle buffers, no permutation arrays), so a job
// reading from many sources costs no more memory than one reading from one.
//
// The algorithm is specified exactly in docs/offload.md so that a reader in another
// language reproduces it; hashes are SHA-256 (see H64) and the only floating-point
// arithmetic is the mixing bounds, evaluated in float64 in a fixed order.
package schedule
