package authn

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// counts gathers c's counters as name/label -> value.
func counts(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			out[f.GetName()+"/"+m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	return out
}

// TestAuthnMetrics: the delegation tokens a co-process sends to its daemon are counted by
// result (on a DataNode each rejected one cost a NameNode call), and the calls the failure
// guard refuses without verifying by reason; every series is there from the start.
func TestAuthnMetrics(t *testing.T) {
	lis := bufconn.Listen(1 << 20)
	hs := grpc.NewServer()
	pb.RegisterSecurityHostServer(hs, fakeSecurityHost{})
	go func() { _ = hs.Serve(lis) }()
	defer hs.Stop()
	conn, err := grpc.NewClient("passthrough:///host", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	g := NewFailGuard(&Secure{Host: NewHost(conn)}, 1, 2, time.Minute)
	now := time.Unix(1000, 0)
	g.now = func() time.Time { return now }
	zero := counts(t, g.Collector())
	if len(zero) != 5 {
		t.Fatalf("metrics at start: %v, want 3 results and 2 reasons at zero", zero)
	}
	call := func(pw string) {
		ctx := callFrom("10.0.0.1", "HDFS-Token "+Token{Identifier: []byte("alice"), Password: []byte(pw), Kind: HDFSDelegationKind}.Encode())
		g.Authenticate(ctx, "/m")
	}
	call("good")     // valid
	call("forged-1") // rejected
	call("forged-1") // cached
	call("forged-2") // throttled: the burst of 2 is spent
	got := counts(t, g.Collector())
	want := map[string]float64{"newtricks_authn_token_verifications_total/valid": 1, "newtricks_authn_token_verifications_total/rejected": 1,
		"newtricks_authn_token_verifications_total/error": 0, "newtricks_authn_refusals_total/cached": 1, "newtricks_authn_refusals_total/throttled": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
