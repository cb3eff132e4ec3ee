package coproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Component is the part of a co-process that differs between namenode-ext and datanode-ext.
type Component interface {
	// Start is called once, on the first Configure. host is the connection to the Java host
	// service, api the public gRPC server (not yet serving: register services on it), reg the
	// Prometheus registry. Work that outlives Start runs until ctx is done.
	Start(ctx context.Context, env Env) error
	// Counters reports the component's state for Extension.Status.
	Counters() Counters
}

// APIListener is implemented by a Component that needs to know where its public API listens
// (the address bound, e.g. with port 0 configured): APIServing is called once, right after the
// API started serving, with the context of the component's background work.
type APIListener interface {
	APIServing(ctx context.Context, addr string)
}

// APIGate is implemented by a Component that answers some public calls itself before they are
// authenticated or reach a handler (namenode-ext beside a standby NameNode): Gate returns a
// gRPC status error for a call that must not run now, nil otherwise. It must not block.
type APIGate interface {
	Gate(fullMethod string) error
}

// Env is what a Component gets at Start.
type Env struct {
	Conf       Conf
	Request    *pb.ConfigureRequest
	Host       *grpc.ClientConn
	API        *grpc.Server
	Registry   *prometheus.Registry
	Log        hclog.Logger
	Generation int32
}

// Counters is a component's contribution to Extension.Status.
type Counters struct {
	LastTxid       int64
	EventsReceived int64
	Named          map[string]int64
}

// Keys of the common configuration. The prefix is the co-process's ("newtricks.namenode.ext"
// or "newtricks.datanode.ext").
const (
	// KeyAPIAddress: <prefix>.api.address, host:port of the public gRPC API; empty disables.
	KeyAPIAddress = ".api.address"
	// KeyMetricsAddress: <prefix>.metrics.address, host:port of the Prometheus /metrics
	// endpoint; empty disables.
	KeyMetricsAddress = ".metrics.address"
)

// Options describe one co-process.
type Options struct {
	Name       string // "namenode-ext"
	Prefix     string // "newtricks.namenode.ext"
	Version    string
	DefaultAPI string // default <prefix>.api.address; ":port" binds to DaemonAddressKey's host
	// DaemonAddressKey is the forwarded HDFS key whose host the API binds to by default
	// ("dfs.namenode.rpc-address"); loopback if it is unset.
	DaemonAddressKey string
	DefaultMetrics   string // default <prefix>.metrics.address
	// APIServerOptions are added to the public API server's options (transport tuning).
	APIServerOptions []grpc.ServerOption
}

// Coprocess implements pb.ExtensionServer around a Component.
type Coprocess struct {
	pb.UnimplementedExtensionServer

	opts    Options
	comp    Component
	log     hclog.Logger
	started time.Time

	mu          sync.Mutex
	configured  bool
	apiAddr     string
	metricsAddr string
	authMethod  string // the public API's authentication (authn.Method)
	// cancel ends the component's background work; nothing calls it yet because a
	// co-process lives until the host shuts it down, but it keeps the context owned.
	cancel context.CancelFunc
}

// New returns a co-process that is not configured yet.
func New(opts Options, comp Component, log hclog.Logger) *Coprocess {
	return &Coprocess{opts: opts, comp: comp, log: log, started: time.Now()}
}

// Register adds the Extension service to the go-plugin server.
func (c *Coprocess) Register(s *grpc.Server) { pb.RegisterExtensionServer(s, c) }

// Configure starts the component on the first call. Later calls (the host re-sends its
// configuration after it reconnects) are acknowledged with the addresses already in use.
func (c *Coprocess) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.configured {
		return c.configureResponse(), nil
	}
	if req.GetHostAddress() == "" {
		return nil, status.Error(codes.InvalidArgument, "configure: host_address is empty")
	}
	conf := Conf(req.GetConf())
	reg := prometheus.NewRegistry()
	hostCalls := newHostCallMetrics()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), hostCalls)
	host, err := grpc.NewClient(req.GetHostAddress(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)),
		grpc.WithUnaryInterceptor(hostCalls.intercept))
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "configure: dial host %q: %v", req.GetHostAddress(), err)
	}

	// Every public call goes through the authenticator; handlers learn their user only from
	// authn.ActAs. The cluster's hadoop.security.authentication picks it (authn.Config).
	apiAddrConf := c.apiAddress(conf)
	sec := authn.ConfigFrom(func(k string) string { return conf[k] }, c.opts.Prefix)
	apiHost, _, _ := net.SplitHostPort(apiAddrConf)
	auth, authOpts, err := sec.Server(host, apiHost)
	if err != nil {
		host.Close()
		// Fail closed: no public API rather than one that trusts whoever calls it.
		return nil, status.Errorf(codes.FailedPrecondition, "configure: public API security: %v", err)
	}
	if m, ok := auth.(interface{ Collector() prometheus.Collector }); ok && m.Collector() != nil {
		reg.MustRegister(m.Collector()) // newtricks_authn_*
	}
	if sec.Insecure() {
		c.log.Warn("SIMPLE AUTHENTICATION: the public API trusts the user name each caller claims, as HDFS does "+
			"under hadoop.security.authentication=simple; anyone who can reach it can act as any user. "+
			"Use Kerberos for anything but a test cluster.", "api", apiAddrConf, "tls", sec.TLSCert != "")
	}
	// A panic in any call, its authentication included, fails that call only.
	rec := &Recovery{Log: c.log}
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "newtricks_api_panics_total",
		Help: "Public API calls that panicked and were answered INTERNAL (the co-process went on)."},
		func() float64 { return float64(rec.Panics.Load()) }))
	apiOpts := append([]grpc.ServerOption{grpc.MaxRecvMsgSize(64 << 20), grpc.MaxSendMsgSize(64 << 20)}, rec.ServerOptions()...)
	if g, ok := c.comp.(APIGate); ok {
		apiOpts = append(apiOpts, gateOptions(g)...)
	}
	apiOpts = append(apiOpts, authOpts...)
	apiOpts = append(apiOpts, c.opts.APIServerOptions...)
	api := grpc.NewServer(apiOpts...)
	runCtx, cancel := context.WithCancel(context.Background())
	env := Env{Conf: conf, Request: req, Host: host, API: api, Registry: reg,
		Log: c.log, Generation: req.GetGeneration()}
	if err := c.comp.Start(runCtx, env); err != nil {
		cancel()
		host.Close()
		return nil, ToStatus(fmt.Errorf("configure: %w", err))
	}

	apiAddr, err := serveAPI(apiAddrConf, api, c.log)
	if err != nil {
		cancel()
		host.Close()
		return nil, status.Errorf(codes.FailedPrecondition, "configure: %v", err)
	}
	if l, ok := c.comp.(APIListener); ok && apiAddr != "" {
		l.APIServing(runCtx, apiAddr)
	}
	metricsAddr, err := serveMetrics(conf.String(c.opts.Prefix+KeyMetricsAddress, c.opts.DefaultMetrics), reg, c.log)
	if err != nil {
		c.log.Warn("metrics endpoint disabled", "error", err)
	}
	c.configured, c.cancel = true, cancel
	c.apiAddr, c.metricsAddr = apiAddr, metricsAddr
	c.authMethod = string(sec.Method)
	c.log.Info("configured", "daemon", req.GetDaemonKind(), "daemon_id", req.GetDaemonId(),
		"generation", req.GetGeneration(), "host", req.GetHostAddress(), "api", apiAddr, "metrics", metricsAddr)
	return c.configureResponse(), nil
}

// Status reports health and the component's counters. A co-process is healthy once it runs;
// an unconfigured one is healthy too (the host configures it right after the health check).
func (c *Coprocess) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	c.mu.Lock()
	configured, authMethod := c.configured, c.authMethod
	c.mu.Unlock()
	resp := &pb.StatusResponse{
		Healthy:    true,
		Configured: configured,
		Version:    c.opts.Version,
		LastTxid:   -1,
		UptimeMs:   time.Since(c.started).Milliseconds(),
	}
	if configured {
		cs := c.comp.Counters()
		resp.LastTxid, resp.EventsReceived, resp.Counters = cs.LastTxid, cs.EventsReceived, cs.Named
		if authMethod == string(authn.MethodSimple) {
			// Surfaced in status so nobody runs a simple-auth API without being told.
			named := make(map[string]int64, len(resp.Counters)+1)
			for k, v := range resp.Counters {
				named[k] = v
			}
			named["api_auth_simple"] = 1
			resp.Counters = named
		}
	}
	return resp, nil
}

// apiAddress is <prefix>.api.address, or the default. A default (or configured) address
// without a host binds to the daemon's own address (Options.DaemonAddressKey), not to every
// interface: the public API is exactly as reachable as the daemon's RPC port.
func (c *Coprocess) apiAddress(conf Conf) string { return c.opts.APIAddress(conf) }

// APIAddress is the address the public API is configured to listen on (see apiAddress); a
// component uses its host as the _HOST of its own principal, as the authenticator does.
func (o Options) APIAddress(conf Conf) string {
	addr := conf.String(o.Prefix+KeyAPIAddress, o.DefaultAPI)
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" || o.DaemonAddressKey == "" {
		return addr
	}
	if h, _, err := net.SplitHostPort(conf.String(o.DaemonAddressKey, "")); err == nil {
		return net.JoinHostPort(h, port)
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// gateOptions run g before authentication: a call it refuses costs no credential check.
func gateOptions(g APIGate) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := g.Gate(info.FullMethod); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := g.Gate(info.FullMethod); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}

func serveAPI(addr string, s *grpc.Server, log hclog.Logger) (string, error) {
	if addr == "" {
		return "", nil
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listen for the API on %s: %w", addr, err)
	}
	go func() {
		if err := s.Serve(lis); err != nil {
			log.Error("api server stopped", "error", err)
		}
	}()
	return lis.Addr().String(), nil
}

func serveMetrics(addr string, reg *prometheus.Registry, log hclog.Logger) (string, error) {
	if addr == "" {
		return "", nil
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listen for metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "error", err)
		}
	}()
	return lis.Addr().String(), nil
}
