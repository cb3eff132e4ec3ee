package extplugin

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// Handshake must match the Java host (io.newtricks.hadoop.supervise.CoprocessSupervisor): it
// sets the magic cookie env var and PLUGIN_PROTOCOL_VERSIONS before it starts the binary.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "NEWTRICKS_PLUGIN",
	MagicCookieValue: "hdfs-ext-v1",
}

// Registrar registers a co-process's gRPC services on the go-plugin server.
type Registrar func(s *grpc.Server)

// grpcPlugin adapts a Registrar to go-plugin's GRPCPlugin. The host is Java and never
// dispenses through go-plugin's Go client, so GRPCClient is never called.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	register Registrar
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	p.register(s)
	return nil
}

func (p *grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (interface{}, error) {
	return nil, nil
}

// NewLogger returns a JSON logger on the process's real stderr. It must be created before
// Serve: go-plugin then replaces os.Stderr with a pipe that only drains if the host reads
// plugin.GRPCStdio, and the Java host instead sends fd 2 to a log file.
func NewLogger(name string, level string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      hclog.LevelFromString(level),
		Output:     os.Stderr,
		JSONFormat: true,
	})
}

// Serve serves the services of one co-process until the host shuts it down through
// plugin.GRPCController or its parent process dies. It does not return before then.
func Serve(name string, log hclog.Logger, register Registrar) {
	go exitWithParent(log, os.Getppid(), time.Second)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{name: &grpcPlugin{register: register}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(64<<20), grpc.MaxSendMsgSize(64<<20))
			return grpc.NewServer(opts...)
		},
		Logger: log.Named("go-plugin"),
	})
}

// exitWithParent ends the process once it has been re-parented: its Hadoop daemon is gone
// (killed with SIGKILL, say) and nobody will ever shut it down.
func exitWithParent(log hclog.Logger, parent int, every time.Duration) {
	for range time.Tick(every) {
		if os.Getppid() != parent {
			log.Warn("parent process is gone, exiting", "parent_pid", parent)
			os.Exit(0)
		}
	}
}
