package dnext

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/datanode-ext/offload"
	"github.com/newtricks/newtricks/internal/coproc"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Version is reported in Extension.Status.
const Version = "0.1.0"

// Options are datanode-ext's process-level defaults.
var Options = coproc.Options{
	Name:    "datanode-ext",
	Prefix:  Prefix,
	Version: Version,
	// The daemon's own host (dfs.datanode.ipc.address), never every interface by default.
	DefaultAPI:       ":9890",
	DaemonAddressKey: "dfs.datanode.ipc.address",
	DefaultMetrics:   "127.0.0.1:9891",
	// Offload streams about a megabyte of tensors per reader step: write it in large
	// chunks (a 32 KiB buffer, gRPC's default, makes a write, and a wake-up of the reader's
	// process, per 32 KiB), and let idle connections give the buffer back.
	APIServerOptions: []grpc.ServerOption{grpc.WriteBufferSize(1 << 20), grpc.SharedWriteBuffer(true)},
}

// Ext is the datanode-ext component.
type Ext struct {
	mu   sync.Mutex
	uuid string
	xfer string // data transfer address, for offload readers
	// nn is namenode-ext (nil without newtricks.datanode.ext.namenode.api); apiTLS: this
	// node's API serves TLS. Both set by Start, read when the API serves.
	nn     *offload.NameNodeExt
	apiTLS bool
	logger hclog.Logger
}

func (e *Ext) log() hclog.Logger {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.logger == nil {
		return hclog.NewNullLogger()
	}
	return e.logger
}

// New returns datanode-ext.
func New() *Ext { return &Ext{} }

// Start implements coproc.Component.
func (e *Ext) Start(ctx context.Context, env coproc.Env) error {
	cfg, err := ConfigFromConf(env.Conf)
	if err != nil {
		return err
	}
	host := pb.NewDataNodeHostClient(env.Host)
	e.mu.Lock()
	e.logger = env.Log
	e.mu.Unlock()
	e.setUUID(env.Request.GetDaemonId())
	mgr, err := e.startOffload(ctx, env, host, cfg)
	if err != nil {
		return err
	}
	pb.RegisterReplicasServer(env.API, &replicasAPI{host: offload.GRPCHost{Client: host}, reads: mgr, cfg: cfg, uuid: e.getUUID})
	go e.learnIdentity(ctx, host, env)
	return nil
}

// learnIdentity asks the DataNode who it is, for logs and responses; the hook may have
// launched us before the DataNode registered with the NameNode.
func (e *Ext) learnIdentity(ctx context.Context, host pb.DataNodeHostClient, env coproc.Env) {
	for delay := 200 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		id, err := host.Identity(cctx, &pb.IdentityRequest{})
		cancel()
		if err == nil && id.GetUuid() != "" {
			e.setUUID(id.GetUuid())
			e.mu.Lock()
			e.xfer = id.GetXferAddr()
			e.mu.Unlock()
			env.Log.Info("datanode identity", "uuid", id.GetUuid(), "xfer", id.GetXferAddr(),
				"block_pools", id.GetBlockPoolIds(), "block_tokens", id.GetBlockTokenEnabled())
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

func (e *Ext) setUUID(u string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if u != "" {
		e.uuid = u
	}
}

func (e *Ext) getUUID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.uuid
}

// Counters implements coproc.Component.
func (e *Ext) Counters() coproc.Counters { return coproc.Counters{LastTxid: -1} }
