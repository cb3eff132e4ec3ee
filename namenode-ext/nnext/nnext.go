package nnext

import (
	"context"
	"net"
	"sync/atomic"

	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/namenode-ext/events"
	"github.com/newtricks/newtricks/namenode-ext/nnhost"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Version is reported in Extension.Status.
const Version = "0.1.0"

// Options are namenode-ext's process-level defaults.
var Options = coproc.Options{
	Name:    "namenode-ext",
	Prefix:  Prefix,
	Version: Version,
	// The daemon's own host (dfs.namenode.rpc-address), never every interface by default.
	DefaultAPI:       ":9880",
	DaemonAddressKey: "dfs.namenode.rpc-address",
	DefaultMetrics:   "127.0.0.1:9881",
}

// Ext is the namenode-ext component.
type Ext struct {
	sink    *events.Sink
	started atomic.Bool
	terms   atomic.Pointer[terms]
}

// New returns namenode-ext. The event sink exists before Configure so the hook can deliver
// as soon as the handshake is done.
func New() *Ext {
	return &Ext{sink: events.NewSink(10000, -1)}
}

// RegisterPlugin registers the services the NameNode hook calls over the go-plugin socket.
func (e *Ext) RegisterPlugin(s *grpc.Server) { pb.RegisterEventSinkServer(s, e.sink) }

// Start implements coproc.Component.
func (e *Ext) Start(ctx context.Context, env coproc.Env) error {
	cfg, err := ConfigFromConf(env.Conf)
	if err != nil {
		return err
	}
	e.sink.SetRetain(cfg.EventsRetain)
	e.sink.Want(cfg.Events)
	host := pb.NewNameNodeHostClient(env.Host)
	env.Registry.MustRegister(e.sink.Collectors()...)
	// Locate hands the host's LocatedBlocks (with the user's block tokens) to the caller as
	// they are: the Namespace API answers with the host's own message, so it keeps the
	// generated client.
	pb.RegisterNamespaceServer(env.API, &namespaceAPI{host: host, sink: e.sink})
	pb.RegisterDataNodeDirectoryServer(env.API, newDirectory(host, cfg.DataNodesTTL, e.registrants(env, cfg), env.Log.Named("directory")))
	t, err := startSubsystems(ctx, env, cfg, nnhost.New(host), e.sink)
	if err != nil {
		return err
	}
	e.terms.Store(t)
	e.started.Store(true)
	return nil
}

// Gate implements coproc.APIGate: while the NameNode is not active, the calls that need it
// (Hints, Mirror, Namespace) are answered UNAVAILABLE "standby" before authentication, as a
// standby NameNode answers its clients; clients go to the other NameNode's namenode-ext.
func (e *Ext) Gate(method string) error {
	if t := e.terms.Load(); t != nil {
		return t.gate(method)
	}
	return nil
}

// EventFilter implements coproc.EventSubscriber: what the hook forwards.
func (e *Ext) EventFilter() *pb.EventFilter { return e.sink.Filter() }

// Counters implements coproc.Component.
func (e *Ext) Counters() coproc.Counters {
	last, received, dropped := e.sink.Stats()
	return coproc.Counters{LastTxid: last, EventsReceived: received,
		Named: map[string]int64{"audit_dropped_total": dropped}}
}

// registrants is who may register datanode-ext endpoints with a proven identity: the
// configured users, or the short name of namenode-ext's own principal (Config.RegisterUsers).
func (e *Ext) registrants(env coproc.Env, cfg Config) func(context.Context) (map[string]bool, error) {
	sec := authn.ConfigFrom(func(k string) string { return env.Conf[k] }, Prefix)
	principal := ""
	if sec.Method == authn.MethodKerberos {
		apiHost, _, _ := net.SplitHostPort(env.Conf.String(Prefix+coproc.KeyAPIAddress, ""))
		if p, err := authn.ReplaceHost(sec.Principal, apiHost); err == nil {
			principal = p
		}
	}
	return registrantUsers(cfg.RegisterUsers, principal, authn.NewHost(env.Host).MapPrincipal)
}
