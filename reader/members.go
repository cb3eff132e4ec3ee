package reader

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/internal/nsclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Endpoint is one datanode-ext as namenode-ext's directory lists it.
type Endpoint struct {
	// UUID is its DataNode's; Addr the host:port to dial.
	UUID, Addr string
	// Hostname is the DataNode's host name (the TLS server name of its API).
	Hostname string
	// TLS: the API serves TLS.
	TLS bool
}

// Directory lists the datanode-ext endpoints of the cluster's live DataNodes.
type Directory interface {
	Endpoints(ctx context.Context) ([]Endpoint, error)
}

// NamespaceDirectory is namenode-ext's DataNodeDirectory, asked as User (over a nameservice:
// as NamespaceLocator, one apiclient.DialAll connection for both).
type NamespaceDirectory struct {
	Client pb.DataNodeDirectoryClient
	User   string
}

// Endpoints implements Directory.
func (d NamespaceDirectory) Endpoints(ctx context.Context) ([]Endpoint, error) {
	eps, err := nsclient.List(ctx, d.Client, d.User)
	if err != nil {
		return nil, err
	}
	out := make([]Endpoint, len(eps))
	for i, e := range eps {
		out[i] = Endpoint{UUID: e.UUID, Addr: e.Addr, Hostname: e.Hostname, TLS: e.TLS}
	}
	return out, nil
}

// membership is one set of session members: the nodes (in member order: ownership is
// computed over their UUIDs in this order, by the reader and by every node alike), the files'
// block maps ownership was computed on, and what the directory listed when it was made.
type membership struct {
	nodes []*node
	uuids []string
	files [][]*pb.LocatedBlocks
	// use is held (read) by every step fetched on this membership; closing it takes it.
	use    sync.RWMutex
	closed atomic.Bool
}

// conn returns the shared connection to e's address (with Config.Auth: over TLS when e
// serves it, as e's host, refused when it does not).
func (r *Reader) conn(e Endpoint) (*grpc.ClientConn, error) {
	r.connMu.Lock()
	defer r.connMu.Unlock()
	if cc, ok := r.conns[e.Addr]; ok {
		return cc, nil
	}
	var cc *grpc.ClientConn
	var err error
	if r.cfg.Auth != nil {
		cc, err = r.cfg.Auth.dialNode(e)
	} else {
		cc, err = r.cfg.Dial(e.Addr)
	}
	if err != nil {
		return nil, err
	}
	r.conns[e.Addr] = cc
	return cc, nil
}

// closeConns closes the connections to nodes not in keep (nil: all).
func (r *Reader) closeConns(keep ...*membership) {
	used := map[string]bool{}
	for _, m := range keep {
		for _, n := range m.nodes {
			used[n.addr] = true
		}
	}
	r.connMu.Lock()
	defer r.connMu.Unlock()
	for addr, cc := range r.conns {
		if !used[addr] {
			cc.Close()
			delete(r.conns, addr)
		}
	}
}

// endpoints returns the nodes to use: Config.Nodes, or what the directory lists now (in UUID
// order, so that readers of one job list their members alike).
func (r *Reader) endpoints(ctx context.Context) ([]Endpoint, error) {
	if len(r.cfg.Nodes) > 0 {
		out := make([]Endpoint, len(r.cfg.Nodes))
		for i, a := range r.cfg.Nodes {
			out[i] = Endpoint{Addr: a}
		}
		return out, nil
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	eps, err := r.cfg.Directory.Endpoints(lctx)
	if err != nil {
		return nil, fmt.Errorf("list the datanode-ext directory: %w", err)
	}
	sort.Slice(eps, func(i, j int) bool { return eps[i].UUID < eps[j].UUID })
	return eps, nil
}

// discover builds a membership from the nodes that answer NodeStatus now (probe) and
// locates every source's files for it (build).
func (r *Reader) discover(ctx context.Context) (*membership, error) {
	eps, err := r.endpoints(ctx)
	if err != nil {
		return nil, err
	}
	return r.build(ctx, r.probe(ctx, eps))
}

// probe returns the endpoints that answer NodeStatus as a node of their own (a listed node
// whose status names another DataNode, or one already seen, is left out), in endpoint order.
func (r *Reader) probe(ctx context.Context, eps []Endpoint) []*node {
	type answer struct {
		st *pb.OffloadNodeStatus
		c  pb.OffloadClient
	}
	ans := make([]answer, len(eps))
	var wg sync.WaitGroup
	for i, e := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc, err := r.conn(e)
			if err != nil {
				r.stats.setNodeError(fmt.Sprintf("node %s (%s): %v", e.Addr, e.UUID, err))
				return
			}
			c := pb.NewOffloadClient(cc)
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			st, err := c.NodeStatus(sctx, &pb.OffloadNodeStatusRequest{User: r.cfg.User})
			if err != nil {
				r.stats.setNodeError(fmt.Sprintf("node %s (%s): status: %v", e.Addr, e.UUID, err))
				return
			}
			ans[i] = answer{st, c}
		}()
	}
	wg.Wait()
	var out []*node
	seen := map[string]bool{}
	for i, e := range eps {
		st := ans[i].st
		if st.GetDatanodeUuid() == "" || seen[st.GetDatanodeUuid()] || (e.UUID != "" && st.GetDatanodeUuid() != e.UUID) {
			continue
		}
		seen[st.GetDatanodeUuid()] = true
		out = append(out, &node{addr: e.Addr, uuid: st.GetDatanodeUuid(), domain: st.GetDeterminismDomain(), client: ans[i].c})
	}
	return out
}

// build makes the membership of nodes and locates every source's files for it (the layout
// ownership is computed on: the nodes locate the same files when their sessions open). A
// node of another determinism domain turns the reader raw-only.
func (r *Reader) build(ctx context.Context, nodes []*node) (*membership, error) {
	m := &membership{nodes: nodes}
	for _, n := range nodes {
		n.mem = m
		m.uuids = append(m.uuids, n.uuid)
		if n.domain != r.domain {
			// One consistent path for every sample: this reader transforms everything.
			r.goRawOnly(domainMismatch(n.addr, n.uuid, n.domain, r.domain))
		}
	}
	if len(nodes) == 0 {
		return m, nil // nothing to offload to: no need for block maps
	}
	for _, s := range r.srcs {
		files, err := r.locateFiles(ctx, s)
		if err != nil {
			return nil, err
		}
		m.files = append(m.files, files)
	}
	return m, nil
}

// members is the set of m's UUIDs.
func (m *membership) members() map[string]bool {
	out := make(map[string]bool, len(m.uuids))
	for _, u := range m.uuids {
		out[u] = true
	}
	return out
}

// locateFiles locates a source's files (for ownership: the replica holders) and checks
// their lengths against the index.
func (r *Reader) locateFiles(ctx context.Context, s *source) ([]*pb.LocatedBlocks, error) {
	paths := make([]string, len(s.ix.Files()))
	for i := range paths {
		paths[i] = s.ix.FilePath(i)
	}
	var files []*pb.LocatedBlocks
	if bl, ok := r.cfg.Locator.(BatchLocator); ok {
		var err error
		if files, err = bl.LocateMany(ctx, paths); err != nil {
			return nil, fmt.Errorf("locate the files of %s: %w", s.ix.Root(), err)
		}
		if len(files) != len(paths) {
			return nil, fmt.Errorf("locate the files of %s: %d answers for %d files", s.ix.Root(), len(files), len(paths))
		}
	} else {
		for _, p := range paths {
			lb, err := r.cfg.Locator.Locate(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("locate %s: %w", p, err)
			}
			files = append(files, lb)
		}
	}
	for i, f := range s.ix.Files() {
		if files[i].GetFileLength() != f.GetLength() {
			return nil, fmt.Errorf("%w: %s has %d bytes, the index says %d", dataset.ErrStale, paths[i], files[i].GetFileLength(), f.GetLength())
		}
	}
	return files, nil
}

// openAll opens a session on every member from step on; a node that fails is marked down
// (and tried again every Retry).
func (r *Reader) openAll(ctx context.Context, m *membership, step uint64) {
	var wg sync.WaitGroup
	for _, n := range m.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.openSession(ctx, n, step); err != nil {
				n.mu.Lock()
				n.downAt = time.Now()
				n.mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// watchDirectory asks the directory again every Rediscover. When the nodes it lists that
// answer differ from the members (a node joined, or left: its registration expired, or it no
// longer answers), it makes a new membership, opens its sessions from the step being
// fetched, switches to it between two steps and closes the old one's sessions once no step
// uses them. A listed node that does not answer is asked again at every tick (NodeStatus
// only: files are located again only for a new membership).
func (r *Reader) watchDirectory(ctx context.Context) {
	defer r.watch.Done()
	t := time.NewTicker(r.cfg.Rediscover)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		eps, err := r.endpoints(ctx)
		if err != nil {
			continue // keep the members we have; the next tick asks again
		}
		old := r.mem.Load()
		listed := map[string]bool{}
		for _, e := range eps {
			listed[e.UUID] = true
		}
		if sameSet(listed, old.members()) {
			continue
		}
		nodes := r.probe(ctx, eps)
		probed := map[string]bool{}
		for _, n := range nodes {
			probed[n.uuid] = true
		}
		if sameSet(probed, old.members()) {
			continue
		}
		m, err := r.build(ctx, nodes)
		if err != nil {
			continue
		}
		r.openAll(ctx, m, r.next.Load())
		if ctx.Err() != nil {
			r.closeMembership(m)
			return
		}
		r.mem.Store(m)
		r.stats.add(&r.stats.memberChanges, 1)
		r.closeMembership(old)
		r.closeConns(m)
	}
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// closeMembership closes m's sessions once no step uses them.
func (r *Reader) closeMembership(m *membership) {
	m.closed.Store(true)
	m.use.Lock()
	defer m.use.Unlock()
	for _, n := range m.nodes {
		n.mu.Lock()
		id := n.session
		n.session = ""
		n.mu.Unlock()
		if id != "" {
			r.closeSession(n, id)
		}
	}
}
