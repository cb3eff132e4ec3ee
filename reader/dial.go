package reader

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/newtricks/newtricks/internal/apiclient"
)

// Transport settings for the connections to the nodes, which carry a step's tensors (about a
// megabyte per step for a batch of 8 small images or clips):
//   - flow-control windows large enough for a whole step, so that the reader sends a window
//     update about once per megabyte instead of once per 16 KiB DATA frame (gRPC's default
//     64 KiB window, whose bandwidth-delay estimate stays small on a fast network), and the
//     node never stalls waiting for one;
//   - a 256 KiB read buffer, so that a step arrives in a few large reads from the socket.
const (
	streamWindow = 8 << 20
	connWindow   = 16 << 20
	readBuffer   = 256 << 10
	maxRecvMsg   = 128 << 20
)

// DialOptions are the connection options the reader uses with its default Dial and with
// Config.Auth; a custom Config.Dial should include them (plus its own credentials and
// backoff). Credentials are better given as Config.Auth, which dials each node as the
// directory names it (TLS server name, service principal) and never over plaintext.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvMsg)),
		grpc.WithInitialWindowSize(streamWindow),
		grpc.WithInitialConnWindowSize(connWindow),
		grpc.WithReadBufferSize(readBuffer),
	}
}

// dialInsecure connects to a node. Reconnects back off to at most one second
// (apiclient.Reconnect), so a node that restarts is used again within about Config.Retry.
func dialInsecure(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, append(DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()), apiclient.Reconnect())...)
}
