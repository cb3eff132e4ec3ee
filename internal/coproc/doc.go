// Package coproc is the lifecycle shared by the newtricks co-processes: it implements the
// Extension service the Java host calls after the go-plugin handshake (Configure, Status),
// dials the host's callback service, and starts the co-process's public gRPC API and its
// Prometheus endpoint once it knows from Configure where they should listen.
//
// A co-process supplies a Component; coproc owns everything around it.
package coproc
