// Package transformsvc is the gRPC edge of offload in datanode-ext: the public Offload service
// (proto newtricks.v1.Offload). Every call resolves its user through internal/authn, hands the
// work to package session and maps its sentinel errors to gRPC codes. It also holds the client
// side of peer range reads.
package transformsvc
