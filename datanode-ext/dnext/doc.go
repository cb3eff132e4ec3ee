// Package dnext is datanode-ext: the Go co-process beside a DataNode. It serves readers the
// replicas this DataNode stores (and, later, transformed samples), but only after the DataNode
// itself has verified the caller's block access token through the hook's DataNodeHost service.
package dnext
