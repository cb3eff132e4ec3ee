package kit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// Health is what WaitHealthy found.
type Health struct {
	LiveDataNodes int
}

// dialOpts are the kit's gRPC options: plaintext (the kit speaks to simple-auth clusters), and
// reconnects every 50-250 ms so a co-process that restarts is seen as soon as it listens.
func dialOpts() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(128 << 20)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 250 * time.Millisecond},
			MinConnectTimeout: time.Second,
		})}
}

// Dial connects to a co-process API as the kit does (the reader's Config.Dial).
func Dial(addr string) (*grpc.ClientConn, error) { return grpc.NewClient(addr, dialOpts()...) }

// WaitHealthy waits, up to within, until the cluster serves: the NameNode answers JMX and is
// out of safe mode with at least wantDataNodes live DataNodes (0: at least one, or as many as
// c.DataNodeAPIs lists), HDFS answers, namenode-ext answers, and every datanode-ext answers. It
// fills in what c leaves empty (superuser, DataNode APIs). The error names the first part that
// was not healthy at the deadline and what it last said.
func WaitHealthy(ctx context.Context, c *Cluster, wantDataNodes int, within time.Duration) (Health, error) {
	c.defaults()
	if wantDataNodes == 0 {
		wantDataNodes = max(1, len(c.DataNodeAPIs))
	}
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var h Health
	var what string
	var last error
	step := func(name string, f func(ctx context.Context) error) bool {
		what = name
		for {
			cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
			last = f(cctx)
			ccancel()
			if last == nil {
				return true
			}
			select {
			case <-ctx.Done():
				return false
			case <-time.After(time.Second):
			}
		}
	}
	var live map[string]liveNode
	ok := step(fmt.Sprintf("NameNode web server at %s (JMX: out of safe mode, %d live DataNodes)", c.NameNodeHTTP, wantDataNodes), func(ctx context.Context) error {
		var err error
		var safemode string
		if live, safemode, err = nameNodeInfo(ctx, c.NameNodeHTTP); err != nil {
			return err
		}
		if safemode != "" {
			return fmt.Errorf("in safe mode: %s", safemode)
		}
		if len(live) < wantDataNodes {
			return fmt.Errorf("%d live DataNodes", len(live))
		}
		h.LiveDataNodes = len(live)
		return nil
	}) && step("HDFS at "+c.NameNode, func(ctx context.Context) error {
		cl, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{c.NameNode}, User: c.User})
		if err != nil {
			return err
		}
		defer cl.Close()
		fi, err := cl.Stat("/")
		if err != nil {
			return err
		}
		if c.Superuser == "" {
			if fs, ok := fi.(*hdfs.FileInfo); ok {
				c.Superuser = fs.Owner()
			}
		}
		return nil
	}) && step("namenode-ext API at "+c.NameNodeAPI, func(ctx context.Context) error {
		cc, err := grpc.NewClient(c.NameNodeAPI, dialOpts()...)
		if err != nil {
			return err
		}
		defer cc.Close()
		_, err = pb.NewNamespaceClient(cc).RecentEvents(ctx, &pb.RecentEventsRequest{Limit: 1})
		return err
	})
	if ok && len(c.DataNodeAPIs) == 0 {
		for _, n := range live {
			host, _, err := net.SplitHostPort(n.XferAddr)
			if err != nil {
				continue
			}
			c.DataNodeAPIs = append(c.DataNodeAPIs, net.JoinHostPort(host, strconv.Itoa(c.DataNodeAPIPort)))
		}
		sort.Strings(c.DataNodeAPIs)
	}
	for i := 0; ok && i < len(c.DataNodeAPIs); i++ {
		addr := c.DataNodeAPIs[i]
		ok = step(fmt.Sprintf("datanode-ext %d API at %s", i, addr), func(ctx context.Context) error {
			cc, err := grpc.NewClient(addr, dialOpts()...)
			if err != nil {
				return err
			}
			defer cc.Close()
			_, err = pb.NewOffloadClient(cc).NodeStatus(ctx, &pb.OffloadNodeStatusRequest{User: c.User})
			return err
		})
	}
	if !ok {
		return h, fmt.Errorf("%s: not healthy within %v: %v", what, within, last)
	}
	return h, nil
}

type statusError struct {
	url    string
	code   int
	status string
}

func (e *statusError) Error() string { return "GET " + e.url + ": " + e.status }

type liveNode struct {
	InfoAddr string `json:"infoAddr"`
	XferAddr string `json:"xferaddr"`
}

// nameNodeInfo reads the NameNodeInfo bean: the live DataNodes and the safe-mode message.
func nameNodeInfo(ctx context.Context, httpAddr string) (map[string]liveNode, string, error) {
	var body struct {
		Beans []struct {
			LiveNodes string `json:"LiveNodes"`
			Safemode  string `json:"Safemode"`
		} `json:"beans"`
	}
	if err := getJSON(ctx, "http://"+httpAddr+"/jmx?qry="+url.QueryEscape("Hadoop:service=NameNode,name=NameNodeInfo"), &body); err != nil {
		return nil, "", err
	}
	if len(body.Beans) == 0 {
		return nil, "", fmt.Errorf("no NameNodeInfo bean at %s", httpAddr)
	}
	live := map[string]liveNode{}
	if err := json.Unmarshal([]byte(body.Beans[0].LiveNodes), &live); err != nil {
		return nil, "", fmt.Errorf("LiveNodes: %w", err)
	}
	return live, body.Beans[0].Safemode, nil
}

func getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &statusError{u, resp.StatusCode, resp.Status}
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// runningConf reads one key of the running NameNode's configuration (its /conf servlet); ok
// is false when the servlet does not answer (then the caller cannot tell).
func runningConf(ctx context.Context, httpAddr, key string) (value string, ok bool) {
	var body struct {
		Property struct {
			Value string `json:"value"`
		} `json:"property"`
	}
	err := getJSON(ctx, "http://"+httpAddr+"/conf?name="+url.QueryEscape(key), &body)
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusNotFound {
		return "", true // the servlet answers 404 for a key that is not set
	}
	if err != nil {
		return "", false
	}
	return body.Property.Value, true
}
