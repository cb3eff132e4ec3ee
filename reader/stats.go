package reader

import (
	"sync"
	"time"
)

// Stats are the reader's totals since Open.
type Stats struct {
	Steps int64
	// Samples made by each path: tensors from DataNodes, raw bytes from DataNodes transformed
	// here, and samples read from HDFS and transformed here; failed samples.
	Offloaded, Raw, Local, Errors int64
	// Bytes received from DataNodes (frames) and read from HDFS (encoded samples).
	BytesFromNodes, BytesFromHDFS int64
	// Wait is the total time Next blocked; Waits every step's (at most the last 1,000,000).
	Wait  time.Duration
	Waits []time.Duration
	// LocalTransform is the time spent running graphs here (summed over workers).
	LocalTransform time.Duration
	// Reconnects counts sessions reopened after a node failed.
	Reconnects int64
	// Members is how many nodes the current sessions are over; MemberChanges counts the
	// switches to a new set of members (nodes that joined or left namenode-ext's directory).
	Members       int
	MemberChanges int64
	// RawOnly: the reader makes every sample itself (from raw bytes the nodes send, or from
	// HDFS), so all samples come from one path; RawOnlyReason says why (Config.ForceRawOnly,
	// or which node's determinism domain differs from the reader's). Once set it stays set.
	RawOnly       bool
	RawOnlyReason string
	// RefusedTensors counts samples a node sent as tensors that the reader did not use: made
	// in another determinism domain, or arriving after the reader went raw-only. Each was
	// read and transformed here instead.
	RefusedTensors int64
	// NodeError is the last reason a node the directory listed was left out of the members
	// (it could not be dialled, e.g. a node without TLS when the reader has credentials, or
	// its status call failed, e.g. UNAUTHENTICATED); "" when none was. Its samples are read
	// from HDFS.
	NodeError string
}

// OffloadedFraction is the share of samples transformed on DataNodes.
func (s Stats) OffloadedFraction() float64 {
	n := s.Offloaded + s.Raw + s.Local
	if n == 0 {
		return 0
	}
	return float64(s.Offloaded) / float64(n)
}

type statsCounter struct {
	mu                                            sync.Mutex
	offloaded, raw, local, errors                 int64
	bytesNodes, bytesHDFS, localNanos, reconnects int64
	steps, refused, memberChanges                 int64
	waitSum                                       time.Duration
	waits                                         []time.Duration
	rawOnly                                       string // reason; "" while not raw-only
	nodeErr                                       string
}

func (c *statsCounter) setNodeError(reason string) {
	c.mu.Lock()
	c.nodeErr = reason
	c.mu.Unlock()
}

func (c *statsCounter) setRawOnly(reason string) {
	c.mu.Lock()
	c.rawOnly = reason
	c.mu.Unlock()
}

func (c *statsCounter) add(p *int64, n int64) {
	c.mu.Lock()
	*p += n
	c.mu.Unlock()
}

func (c *statsCounter) wait(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps++
	c.waitSum += d
	if len(c.waits) < 1_000_000 {
		c.waits = append(c.waits, d)
	}
}

// Stats returns a snapshot.
func (r *Reader) Stats() Stats {
	members := 0
	if m := r.mem.Load(); m != nil {
		members = len(m.nodes)
	}
	c := &r.stats
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Members: members, MemberChanges: c.memberChanges, Steps: c.steps, Offloaded: c.offloaded, Raw: c.raw, Local: c.local, Errors: c.errors,
		BytesFromNodes: c.bytesNodes, BytesFromHDFS: c.bytesHDFS, Wait: c.waitSum,
		Waits: append([]time.Duration(nil), c.waits...), LocalTransform: time.Duration(c.localNanos), Reconnects: c.reconnects,
		RawOnly: c.rawOnly != "", RawOnlyReason: c.rawOnly, RefusedTensors: c.refused, NodeError: c.nodeErr}
}
