package main

import (
	"container/heap"
	"math"
	"math/rand/v2"
)

// Params describe the cluster and the storm.
type Params struct {
	Nodes          int
	ReadBW         float64 // bytes/s one DataNode serves to readers (disk or NIC), shared by its read streams
	XferBW         float64 // bytes/s one DataNode sends as a replication source, shared by its transfers
	Xceivers       int     // concurrent streams one DataNode accepts (dfs.datanode.max.transfer.threads)
	Readers        int
	Arrival        float64 // readers start uniformly within [0, Arrival] s after the storm begins
	OpenDelay      float64 // s a reader spends per file open (NameNode round trip, connection)
	Files          int
	BlocksPerFile  int
	BlockBytes     float64
	InitialHolders int     // DataNodes holding the initial replicas: 3 when one writer wrote the set
	Interval       float64 // dfs.namenode.redundancy.interval.seconds
	Heartbeat      float64 // dfs.heartbeat.interval: a transfer starts at the source's next heartbeat
	Seed           uint64
}

// Case is one way to prepare for the storm (t = 0).
type Case struct {
	Name       string
	Factor     int     // target factor; 3 or less: nothing changes
	At         float64 // when the factor is set (negative: before the storm)
	MaxStreams int     // dfs.namenode.replication.max-streams while copying
	Multiplier int     // dfs.namenode.replication.work.multiplier.per.iteration
	Balanced   bool    // BalancedReads (least given first for the block, then per DataNode) instead of a random pick
}

// Result of one simulated storm.
type Result struct {
	Barrier  float64 // s from the storm to the slowest reader's end
	Mean     float64
	Ready    float64 // s from setting the factor until every block had it (-1: never, NaN: nothing to do)
	MaxShare float64 // bytes served by the busiest DataNode / mean over DataNodes
}

// channel is one DataNode resource shared equally by its active streams (processor sharing),
// kept in virtual time: v grows by bw/n per second, and a stream of b bytes added at virtual
// time v0 ends when v reaches v0+b.
type channel struct {
	bw      float64
	v       float64
	last    float64
	ends    streamHeap
	version int
}

type stream struct {
	end float64 // virtual finish
	id  int     // reader id, or -1-transfer id
}

type streamHeap []stream

func (h streamHeap) Len() int           { return len(h) }
func (h streamHeap) Less(i, j int) bool { return h[i].end < h[j].end }
func (h streamHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *streamHeap) Push(x any)        { *h = append(*h, x.(stream)) }
func (h *streamHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (c *channel) advance(t float64) {
	if n := len(c.ends); n > 0 {
		c.v += (t - c.last) * c.bw / float64(n)
	}
	c.last = t
}

func (c *channel) next() float64 {
	if len(c.ends) == 0 {
		return math.Inf(1)
	}
	return c.last + (c.ends[0].end-c.v)*float64(len(c.ends))/c.bw
}

type eventKind int

const (
	evStart eventKind = iota
	evChannel
	evMonitor
	evTransfer
	evSetFactor
	evRetry
)

type event struct {
	t       float64
	kind    eventKind
	a, b    int // reader / node, channel kind
	version int
}

type eventHeap []event

func (h eventHeap) Len() int           { return len(h) }
func (h eventHeap) Less(i, j int) bool { return h[i].t < h[j].t }
func (h eventHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)        { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type transfer struct {
	block   int
	source  int
	targets []int
}

type reader struct {
	file, block int
	// For each block of the open file: how many replicas the NameNode knew at the open (the
	// holders lists only grow, so they are a prefix) and which of them comes first.
	snap, first []int
	start, end  float64
}

// sim is one run.
type sim struct {
	p        Params
	c        Case
	rng      *rand.Rand
	q        eventHeap
	read     []*channel
	xfer     []*channel
	holders  [][]int // block -> DataNodes with a replica
	has      []map[int]bool
	pending  []int // block -> replicas being made
	target   int
	readers  []*reader
	given    []map[int]int // block -> DataNode -> times given first (BalancedReads)
	total    []int         // DataNode -> hinted blocks given first (BalancedReads)
	busy     []int         // node -> transfers scheduled from it and not finished (max-streams)
	xfers    []transfer
	served   []float64
	done     int
	readyAt  float64
	isReady  bool
	factorAt float64
}

// Run simulates one storm.
func Run(p Params, c Case) Result {
	s := &sim{p: p, c: c, rng: rand.New(rand.NewPCG(p.Seed, 7)), target: 3}
	nb := p.Files * p.BlocksPerFile
	for i := 0; i < p.Nodes; i++ {
		s.read = append(s.read, &channel{bw: p.ReadBW})
		s.xfer = append(s.xfer, &channel{bw: p.XferBW})
	}
	s.served = make([]float64, p.Nodes)
	s.busy = make([]int, p.Nodes)
	s.holders = make([][]int, nb)
	s.has = make([]map[int]bool, nb)
	s.pending = make([]int, nb)
	s.given = make([]map[int]int, nb)
	for b := range s.given {
		s.given[b] = map[int]int{}
	}
	s.total = make([]int, p.Nodes)
	for b, hs := range initialHolders(p) {
		s.has[b] = map[int]bool{}
		for _, n := range hs {
			s.holders[b] = append(s.holders[b], n)
			s.has[b][n] = true
		}
	}
	for r := 0; r < p.Readers; r++ {
		s.readers = append(s.readers, &reader{})
		heap.Push(&s.q, event{t: s.rng.Float64() * p.Arrival, kind: evStart, a: r})
	}
	if c.Factor > 3 {
		s.factorAt = c.At
		heap.Push(&s.q, event{t: c.At, kind: evSetFactor})
	}
	for s.q.Len() > 0 && s.done < p.Readers {
		e := heap.Pop(&s.q).(event)
		s.handle(e)
	}
	var res Result
	var sum float64
	for _, r := range s.readers {
		res.Barrier = math.Max(res.Barrier, r.end)
		sum += r.end
	}
	res.Mean = sum / float64(p.Readers)
	res.Ready = math.NaN()
	if c.Factor > 3 {
		res.Ready = -1
		if s.isReady {
			res.Ready = s.readyAt - s.factorAt
		}
	}
	var tot, mx float64
	for _, v := range s.served {
		tot += v
		mx = math.Max(mx, v)
	}
	res.MaxShare = mx / (tot / float64(p.Nodes))
	return res
}

func (s *sim) handle(e event) {
	switch e.kind {
	case evStart:
		r := s.readers[e.a]
		r.start = e.t
		s.open(e.t, e.a)
	case evChannel:
		ch := s.read[e.a]
		if e.b == 1 {
			ch = s.xfer[e.a]
		}
		if e.version != ch.version {
			return
		}
		ch.advance(e.t)
		st := heap.Pop(&ch.ends).(stream)
		s.reschedule(e.a, e.b, e.t)
		if st.id >= 0 {
			s.blockRead(e.t, st.id)
		} else {
			s.transferDone(e.t, -1-st.id)
		}
	case evRetry:
		s.startBlock(e.t, e.a)
	case evSetFactor:
		s.target = min(s.c.Factor, s.p.Nodes)
		s.monitor(e.t)
	case evMonitor:
		s.monitor(e.t)
	case evTransfer:
		x := s.xfers[e.a]
		s.addStream(e.t, x.source, 1, -1-e.a, s.p.BlockBytes)
	}
}

// open starts the reader on its current file: the NameNode returns every block's replicas,
// shuffled (stock) or, with BalancedReads, with the replica given first least often for that
// block first, ties to the DataNode given first least often overall (a replica new to the block
// starts level with the least-used one).
func (s *sim) open(t float64, id int) {
	r := s.readers[id]
	r.snap, r.first = r.snap[:0], r.first[:0]
	for k := 0; k < s.p.BlocksPerFile; k++ {
		b := r.file*s.p.BlocksPerFile + k
		n := len(s.holders[b])
		f := s.rng.IntN(n)
		if s.c.Balanced {
			f = s.leastGiven(b, n)
		}
		r.snap, r.first = append(r.snap, n), append(r.first, f)
	}
	r.block = 0
	s.startBlock(t+s.p.OpenDelay, id)
}

// leastGiven picks BalancedReads' first replica among the first n holders of block b and
// counts it.
func (s *sim) leastGiven(b, n int) int {
	g := s.given[b]
	lo := math.MaxInt
	for _, node := range s.holders[b][:n] {
		if c, ok := g[node]; ok {
			lo = min(lo, c)
		}
	}
	if lo == math.MaxInt {
		lo = 0
	}
	best := -1
	for i, node := range s.holders[b][:n] {
		if _, ok := g[node]; !ok {
			g[node] = lo
		}
		if best < 0 || g[node] < g[s.holders[b][best]] ||
			(g[node] == g[s.holders[b][best]] && s.total[node] < s.total[s.holders[b][best]]) {
			best = i
		}
	}
	g[s.holders[b][best]]++
	s.total[s.holders[b][best]]++
	return best
}

// startBlock reads the current block from the first replica that accepts the connection.
func (s *sim) startBlock(t float64, id int) {
	r := s.readers[id]
	b := r.file*s.p.BlocksPerFile + r.block
	n := r.snap[r.block]
	for k := 0; k < n; k++ {
		node := s.holders[b][(r.first[r.block]+k)%n]
		if len(s.read[node].ends)+len(s.xfer[node].ends) < s.p.Xceivers {
			s.addStream(t, node, 0, id, s.p.BlockBytes)
			s.served[node] += s.p.BlockBytes
			return
		}
	}
	// Every replica refused the connection: the client retries after a pause.
	heap.Push(&s.q, event{t: t + 1, kind: evRetry, a: id})
}

func (s *sim) blockRead(t float64, id int) {
	r := s.readers[id]
	r.block++
	if r.block < s.p.BlocksPerFile {
		s.startBlock(t, id)
		return
	}
	r.file++
	if r.file < s.p.Files {
		s.open(t, id)
		return
	}
	r.end = t
	s.done++
}

func (s *sim) addStream(t float64, node, kind, id int, bytes float64) {
	ch := s.read[node]
	if kind == 1 {
		ch = s.xfer[node]
	}
	ch.advance(t)
	heap.Push(&ch.ends, stream{end: ch.v + bytes, id: id})
	s.reschedule(node, kind, t)
}

func (s *sim) reschedule(node, kind int, t float64) {
	ch := s.read[node]
	if kind == 1 {
		ch = s.xfer[node]
	}
	ch.version++
	if n := ch.next(); !math.IsInf(n, 1) {
		heap.Push(&s.q, event{t: math.Max(n, t), kind: evChannel, a: node, b: kind, version: ch.version})
	}
}

// monitor is the NameNode's RedundancyMonitor: every interval it schedules up to
// Nodes x Multiplier under-replicated blocks, each from a source with fewer than MaxStreams
// transfers, to all its missing targets at once (one pipeline).
func (s *sim) monitor(t float64) {
	budget := s.p.Nodes * s.c.Multiplier
	short := false
	for b := range s.holders {
		need := s.target - len(s.holders[b]) - s.pending[b]
		if len(s.holders[b]) < s.target {
			short = true
		}
		if need <= 0 || budget == 0 {
			continue
		}
		src := -1
		for _, n := range s.holders[b] {
			if s.busy[n] < s.c.MaxStreams && (src < 0 || s.busy[n] < s.busy[src]) {
				src = n
			}
		}
		if src < 0 {
			continue
		}
		var targets []int
		for _, n := range s.rng.Perm(s.p.Nodes) {
			if len(targets) == need {
				break
			}
			if !s.has[b][n] {
				targets = append(targets, n)
			}
		}
		for _, n := range targets {
			s.has[b][n] = true // reserved, as the NameNode's pending replicas
		}
		s.pending[b] += len(targets)
		s.busy[src]++
		budget--
		s.xfers = append(s.xfers, transfer{block: b, source: src, targets: targets})
		heap.Push(&s.q, event{t: t + s.rng.Float64()*s.p.Heartbeat, kind: evTransfer, a: len(s.xfers) - 1})
	}
	if !short {
		if !s.isReady {
			s.readyAt, s.isReady = t, true
		}
		return
	}
	heap.Push(&s.q, event{t: t + s.p.Interval, kind: evMonitor})
}

func (s *sim) transferDone(t float64, id int) {
	x := s.xfers[id]
	s.holders[x.block] = append(s.holders[x.block], x.targets...)
	s.pending[x.block] -= len(x.targets)
	s.busy[x.source]--
	if !s.isReady && s.target > 3 {
		for b := range s.holders {
			if len(s.holders[b]) < s.target {
				return
			}
		}
		s.readyAt, s.isReady = t, true
	}
}

// initialHolders places the 3 replicas of every block at random among the first
// InitialHolders DataNodes (its own random stream, so every case starts from the same
// placement).
func initialHolders(p Params) [][]int {
	rng := rand.New(rand.NewPCG(p.Seed, 11))
	hold := min(max(p.InitialHolders, 3), p.Nodes)
	out := make([][]int, p.Files*p.BlocksPerFile)
	for b := range out {
		out[b] = append([]int(nil), rng.Perm(hold)[:3]...)
	}
	return out
}
