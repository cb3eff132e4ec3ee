// Package reader is the trainer side of offload: a step iterator for one rank of a training
// job. It computes the rank's samples of every step from the schedule spec (package
// schedule), asks the datanode-ext nodes that own them for the transformed tensors (it finds
// the nodes in namenode-ext's directory of live DataNodes and follows it), runs the
// same transform graph locally on samples that come back raw (the node was above its CPU
// threshold) or whose node is unreachable (then it reads the plain HDFS bytes itself), and
// prefetches the next steps. A failed sample is an error for that sample only; the session
// goes on. docs/offload.md describes the wire protocol for readers in other languages.
package reader
