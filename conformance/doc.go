// Package conformance proves newtricks against real Hadoop: every test starts a real NameNode
// and real DataNodes (harness/cluster) with the hooks jar and the Go co-processes, talks to
// them with the colinmarc/hdfs client and the co-processes' public APIs, and stops them.
//
// The tests run when NEWTRICKS_CLUSTER_TESTS=1 and the artifacts exist (make test sets both);
// otherwise they skip with the reason.
package conformance
