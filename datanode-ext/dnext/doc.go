// Package dnext is datanode-ext: the Go co-process beside a DataNode. It serves readers the
// replicas this DataNode stores, but only after the DataNode itself has verified the caller's
// block access token through the hook's DataNodeHost service, and wires the offload service
// (package offload: transformed samples) and its governor into the co-process.
package dnext
