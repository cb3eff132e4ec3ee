// Package nnext is namenode-ext: the Go co-process beside the NameNode. It receives the
// events the NameNode hook forwards, serves the public Namespace API (and the subsystems'
// APIs, such as hotspot's hints) to trainers and the CLI, and calls back into the NameNode
// through the hook's NameNodeHost service.
package nnext
