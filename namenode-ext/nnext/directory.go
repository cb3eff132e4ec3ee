package nnext

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// directory is the DataNodeDirectory service: where the datanode-ext of each live DataNode
// listens (issue 21 item 3, issue 25 item 2). Its entries are soft state: each datanode-ext
// registers every renew interval, and an entry is listed only while it is younger than the
// TTL and its DataNode is live in the NameNode's datanode report. A registration is accepted
// only for a live DataNode, from that DataNode's own IP address, and (with a proven
// identity) from one of the registrant users; the listed address is the DataNode's IP with
// the registered port, so no caller can make readers or peers dial a host of its choosing.
type directory struct {
	pb.UnimplementedDataNodeDirectoryServer
	host pb.NameNodeHostClient
	ttl  time.Duration
	// registrants returns the short names that may register with a proven identity.
	registrants func(ctx context.Context) (map[string]bool, error)
	now         func() time.Time
	log         hclog.Logger

	mu      sync.Mutex
	entries map[string]*dirEntry // by DataNode UUID; at most one per live DataNode
	// live is the last datanode report's live DataNodes by UUID, taken at liveAt; liveTried
	// is the last attempt (a refresh for an unknown UUID is rate-limited by it).
	live      map[string]*pb.DatanodeLoad
	liveAt    time.Time
	liveTried time.Time
	fetch     sync.Mutex // one datanode report at a time
}

type dirEntry struct {
	port int
	tls  bool
	at   time.Time
}

// How stale the cached datanode report may be, and how often an unknown UUID may trigger a
// new one: the NameNode builds the report under its lock, so namenode-ext asks at most once a
// second however many DataNodes register.
const (
	reportMaxAge      = 5 * time.Second
	reportMinInterval = time.Second
	maxUUIDLen        = 128
)

func newDirectory(host pb.NameNodeHostClient, ttl time.Duration, registrants func(context.Context) (map[string]bool, error), log hclog.Logger) *directory {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &directory{host: host, ttl: ttl, registrants: registrants, now: time.Now, log: log,
		entries: map[string]*dirEntry{}, live: map[string]*pb.DatanodeLoad{}}
}

// liveNodes returns the live DataNodes, from a report at most reportMaxAge old; want, if not
// empty, is a UUID the caller needs: missing from the cached report, a new one is asked for
// (at most every reportMinInterval).
func (d *directory) liveNodes(ctx context.Context, want string) (map[string]*pb.DatanodeLoad, error) {
	d.mu.Lock()
	live, at, tried := d.live, d.liveAt, d.liveTried
	d.mu.Unlock()
	now := d.now()
	fresh := !at.IsZero() && now.Sub(at) < reportMaxAge
	if fresh && (want == "" || live[want] != nil || now.Sub(tried) < reportMinInterval) {
		return live, nil
	}
	d.fetch.Lock()
	defer d.fetch.Unlock()
	d.mu.Lock()
	if d.liveTried.After(tried) { // another call fetched meanwhile
		live, at = d.live, d.liveAt
		d.mu.Unlock()
		if at.IsZero() {
			return nil, fmt.Errorf("%w: the NameNode's datanode report is not available yet", coproc.ErrUnavailable)
		}
		return live, nil
	}
	d.liveTried = now
	d.mu.Unlock()
	rep, err := d.host.GetDatanodeReport(ctx, &pb.GetDatanodeReportRequest{})
	if err != nil {
		if !at.IsZero() && now.Sub(at) < d.ttl {
			return live, nil // keep serving the last report for a while
		}
		return nil, fmt.Errorf("datanode report: %w", err)
	}
	m := make(map[string]*pb.DatanodeLoad, len(rep.GetLive()))
	for _, dn := range rep.GetLive() {
		if dn.GetUuid() != "" {
			m[dn.GetUuid()] = dn
		}
	}
	d.mu.Lock()
	d.live, d.liveAt = m, d.now()
	d.mu.Unlock()
	return m, nil
}

// checkUUID rejects what cannot be a DataNode UUID before it is looked up or logged.
func checkUUID(u string) error {
	if u == "" || len(u) > maxUUIDLen {
		return fmt.Errorf("%w: datanode_uuid must be 1..%d characters", coproc.ErrInvalid, maxUUIDLen)
	}
	for _, c := range u {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("%w: datanode_uuid has a character outside [A-Za-z0-9._-]", coproc.ErrInvalid)
		}
	}
	return nil
}

// Register implements pb.DataNodeDirectoryServer.
func (d *directory) Register(ctx context.Context, req *pb.RegisterDataNodeExtRequest) (*pb.RegisterDataNodeExtResponse, error) {
	user, err := authn.ActAs(ctx, req.GetUser())
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	c, _ := authn.FromContext(ctx)
	if c.Identity.Method != authn.MethodSimple {
		allowed, err := d.registrants(ctx)
		if err != nil {
			return nil, coproc.ToStatus(fmt.Errorf("registrant users: %w", err))
		}
		if !allowed[user] {
			return nil, coproc.ToStatus(fmt.Errorf("%w: %s may not register a datanode-ext (%s.datanodes.register.users)", coproc.ErrPermission, user, Prefix))
		}
	}
	if err := checkUUID(req.GetDatanodeUuid()); err != nil {
		return nil, coproc.ToStatus(err)
	}
	if p := req.GetApiPort(); p == 0 || p > 65535 {
		return nil, coproc.ToStatus(fmt.Errorf("%w: api_port %d", coproc.ErrInvalid, p))
	}
	uuid := req.GetDatanodeUuid()
	live, err := d.liveNodes(ctx, uuid)
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	dn := live[uuid]
	if dn == nil {
		return nil, coproc.ToStatus(fmt.Errorf("%w: DataNode %s is not live in the NameNode's report", coproc.ErrPrecondition, uuid))
	}
	from := net.ParseIP(hostOf(c.RemoteAddr))
	if ip := net.ParseIP(dn.GetIp()); ip == nil || from == nil || !ip.Equal(from) {
		return nil, coproc.ToStatus(fmt.Errorf("%w: DataNode %s registers from its own address %s, not from %s", coproc.ErrPermission, uuid, dn.GetIp(), hostOf(c.RemoteAddr)))
	}
	now := d.now()
	e := &dirEntry{port: int(req.GetApiPort()), tls: req.GetTls(), at: now}
	d.mu.Lock()
	prev := d.entries[uuid]
	d.entries[uuid] = e
	d.mu.Unlock()
	if prev == nil || prev.port != e.port || prev.tls != e.tls {
		d.log.Info("datanode-ext registered", "datanode", uuid, "address", net.JoinHostPort(dn.GetIp(), strconv.Itoa(e.port)), "tls", e.tls, "by", user)
	}
	return &pb.RegisterDataNodeExtResponse{Node: entryProto(uuid, e, dn, now),
		RenewMs: uint32((d.ttl / 3).Milliseconds()), TtlMs: uint32(d.ttl.Milliseconds())}, nil
}

// List implements pb.DataNodeDirectoryServer.
func (d *directory) List(ctx context.Context, req *pb.ListDataNodeExtsRequest) (*pb.ListDataNodeExtsResponse, error) {
	if _, err := authn.ActAs(ctx, req.GetUser()); err != nil {
		return nil, coproc.ToStatus(err)
	}
	live, err := d.liveNodes(ctx, "")
	if err != nil {
		return nil, coproc.ToStatus(err)
	}
	now := d.now()
	resp := &pb.ListDataNodeExtsResponse{}
	d.mu.Lock()
	for uuid, e := range d.entries {
		dn := live[uuid]
		if now.Sub(e.at) > d.ttl || dn == nil {
			delete(d.entries, uuid)
			d.log.Info("datanode-ext dropped from the directory", "datanode", uuid, "live", dn != nil, "age", now.Sub(e.at).Round(time.Millisecond))
			continue
		}
		resp.Nodes = append(resp.Nodes, entryProto(uuid, e, dn, now))
	}
	d.mu.Unlock()
	sort.Slice(resp.Nodes, func(i, j int) bool { return resp.Nodes[i].DatanodeUuid < resp.Nodes[j].DatanodeUuid })
	return resp, nil
}

func entryProto(uuid string, e *dirEntry, dn *pb.DatanodeLoad, now time.Time) *pb.DataNodeExt {
	return &pb.DataNodeExt{DatanodeUuid: uuid, ApiAddress: net.JoinHostPort(dn.GetIp(), strconv.Itoa(e.port)),
		Hostname: dn.GetHostname(), XferAddr: dn.GetXferAddr(), Tls: e.tls, AgeMs: now.Sub(e.at).Milliseconds()}
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// registrantUsers returns the registrants function of Config.RegisterUsers: the configured
// short names, or, when none are configured, the short name namenode-ext's own Kerberos
// principal maps to (the co-processes usually share one service principal name,
// newtricks/_HOST), asked once through the NameNode's auth_to_local rules.
func registrantUsers(users []string, principal string, mapPrincipal func(context.Context, string) (string, error)) func(context.Context) (map[string]bool, error) {
	if len(users) > 0 {
		m := map[string]bool{}
		for _, u := range users {
			m[u] = true
		}
		return func(context.Context) (map[string]bool, error) { return m, nil }
	}
	var mu sync.Mutex
	var cached map[string]bool
	return func(ctx context.Context) (map[string]bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if cached != nil {
			return cached, nil
		}
		if principal == "" {
			return nil, fmt.Errorf("%w: set %s.datanodes.register.users (namenode-ext has no Kerberos principal to derive it from)", coproc.ErrPermission, Prefix)
		}
		short, err := mapPrincipal(ctx, principal)
		if err != nil {
			return nil, err
		}
		cached = map[string]bool{short: true}
		return cached, nil
	}
}

// splitList splits a comma-separated key value.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
