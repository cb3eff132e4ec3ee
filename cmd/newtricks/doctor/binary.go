package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/extplugin"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// probeBinary checks that a co-process binary finds its shared libraries and answers the
// go-plugin handshake and Extension/Status as its hook would start it, and records its version.
func (d *doctor) probeBinary(ctx context.Context, s side, bin string) {
	name := s.name + "-ext"
	if missing, err := missingLibs(ctx, bin); err != nil {
		d.r.warn(s.name+".libraries", s.binKey, "could not list %s's shared libraries: %v", bin, err)
	} else if len(missing) > 0 {
		hint := ""
		if s.name == "datanode" {
			hint = " (transforms need FFmpeg 5.1: apt-get install libavformat59 libavcodec59 libswscale6 libavutil57)"
		}
		d.r.fail(s.name+".libraries", s.binKey, "%s cannot start: shared libraries not found: %s%s", bin, strings.Join(missing, ", "), hint)
		return
	} else {
		d.r.pass(s.name+".libraries", s.binKey, "%s finds all its shared libraries", name)
	}
	pctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	st, err := handshake(pctx, name, bin, d.o.Timeout)
	if err != nil {
		d.r.fail(s.name+".handshake", s.binKey, "%s does not start as a co-process: %v", bin, err)
		return
	}
	d.binVersion[name] = st.GetVersion()
	d.r.pass(s.name+".handshake", s.binKey, "%s %s answers the go-plugin handshake and Status", name, st.GetVersion())
}

// missingLibs runs ldd on bin and returns the libraries it cannot find. A static binary has
// none.
func missingLibs(ctx context.Context, bin string) ([]string, error) {
	ldd, err := exec.LookPath("ldd")
	if err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, ldd, bin).CombinedOutput()
	text := string(out)
	if err != nil {
		if strings.Contains(text, "not a dynamic executable") {
			return nil, nil
		}
		return nil, fmt.Errorf("ldd %s: %v: %s", bin, err, strings.TrimSpace(text))
	}
	var missing []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "not found") {
			lib, _, _ := strings.Cut(strings.TrimSpace(line), " ")
			missing = append(missing, lib)
		}
	}
	return missing, nil
}

// stubPlugin lets go-plugin's client connect; doctor talks to the connection directly.
type stubPlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (stubPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error { return nil }
func (stubPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, nil
}

// handshake starts bin as its hook does (magic cookie, unix socket in a private directory),
// calls Extension/Status, and stops it.
func handshake(ctx context.Context, name, bin string, timeout time.Duration) (*pb.StatusResponse, error) {
	dir, err := os.MkdirTemp("", "nt-doctor-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "NEWTRICKS_DAEMON_KIND=doctor")
	var stderr strings.Builder
	c := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  extplugin.Handshake,
		Plugins:          plugin.PluginSet{name: stubPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     timeout,
		UnixSocketConfig: &plugin.UnixSocketConfig{TempDir: dir},
		Logger:           hclog.NewNullLogger(),
		SyncStderr:       &stderr,
	})
	defer c.Kill()
	proto, err := c.Client()
	if err != nil {
		if s := strings.TrimSpace(stderr.String()); s != "" {
			err = fmt.Errorf("%w; its stderr: %s", err, lastLines(s, 3))
		}
		return nil, err
	}
	gc, ok := proto.(*plugin.GRPCClient)
	if !ok {
		return nil, errors.New("not a gRPC plugin")
	}
	return pb.NewExtensionClient(gc.Conn).Status(ctx, &pb.StatusRequest{})
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func ownerName(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "?"
	}
	uid := strconv.FormatUint(uint64(st.Uid), 10)
	if u, err := user.LookupId(uid); err == nil {
		return u.Username
	}
	return uid
}
