package authn

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

const realm = "EXAMPLE.COM"

// serviceKeytab holds newtricks/host and another service's key, as a shared keytab might.
func serviceKeytab(t *testing.T) *keytab.Keytab {
	kt := keytab.New()
	for _, p := range []string{"newtricks/host", "hdfs/host"} {
		if err := kt.AddEntry(p, realm, "secret-"+p, time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
			t.Fatal(err)
		}
	}
	return kt
}

// spnegoFor makes what a client holding a service ticket for sname would send; the ticket is
// made here with the service's key, exactly as the KDC would make it.
func spnegoFor(t *testing.T, kt *keytab.Keytab, user, sname string, start time.Time) []byte {
	cl := client.NewWithPassword(user, realm, "unused", config.New())
	tkt, key, err := messages.NewTicket(cl.Credentials.CName(), realm,
		types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, sname), realm, types.NewKrbFlags(), kt,
		etypeID.AES256_CTS_HMAC_SHA1_96, 1, start, start, start.Add(time.Hour), start.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	init, err := spnego.NewNegTokenInitKRB5(cl, tkt, key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := (&spnego.SPNEGOToken{Init: true, NegTokenInit: init}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKerberosVerifier(t *testing.T) {
	kt := serviceKeytab(t)
	v, err := NewKerberosVerifierKeytab(kt, "newtricks/host@"+realm)
	if err != nil {
		t.Fatal(err)
	}
	tok := spnegoFor(t, kt, "alice", "newtricks/host", time.Now())
	p, err := v.Verify(tok)
	if err != nil || p != "alice@"+realm {
		t.Fatalf("valid token: %q, %v", p, err)
	}
	if _, err := v.Verify(tok); !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), "replay") {
		t.Fatalf("replayed token accepted or wrong error: %v", err)
	}
	// A ticket for another service whose key sits in the same keytab is not ours.
	if _, err := v.Verify(spnegoFor(t, kt, "bob", "hdfs/host", time.Now())); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("ticket for hdfs/host accepted: %v", err)
	}
	// A ticket made with a key we do not hold (a forger's KDC).
	other := keytab.New()
	_ = other.AddEntry("newtricks/host", realm, "guessed", time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96)
	if _, err := v.Verify(spnegoFor(t, other, "mallory", "newtricks/host", time.Now())); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("forged ticket accepted: %v", err)
	}
	// An expired ticket.
	if _, err := v.Verify(spnegoFor(t, kt, "alice", "newtricks/host", time.Now().Add(-3*time.Hour))); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("expired ticket accepted: %v", err)
	}
	for _, junk := range [][]byte{nil, {0x60}, []byte("hello"), tok[:len(tok)/2]} {
		if _, err := v.Verify(junk); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("junk %x accepted: %v", junk, err)
		}
	}
	if _, err := NewKerberosVerifierKeytab(kt, "HTTP/host@"+realm); err == nil {
		t.Fatal("verifier for a principal the keytab lacks")
	}
}

// fakeSecurityHost answers like the daemon would for a cluster with users alice, bob, svc
// (a proxy user for alice) and the superuser hdfs.
type fakeSecurityHost struct {
	pb.UnimplementedSecurityHostServer
}

func (fakeSecurityHost) MapPrincipal(_ context.Context, r *pb.MapPrincipalRequest) (*pb.MapPrincipalResponse, error) {
	name, rlm, _ := strings.Cut(r.Principal, "@")
	if rlm != realm {
		return nil, status.Errorf(codes.PermissionDenied, "no rule for %s", r.Principal)
	}
	short, _, _ := strings.Cut(name, "/")
	return &pb.MapPrincipalResponse{User: short}, nil
}

func (fakeSecurityHost) AuthorizeProxy(_ context.Context, r *pb.AuthorizeProxyRequest) (*pb.AuthorizeProxyResponse, error) {
	if r.RealUser == "svc" && r.User == "alice" {
		return &pb.AuthorizeProxyResponse{}, nil
	}
	return nil, status.Errorf(codes.PermissionDenied, "User: %s is not allowed to impersonate %s", r.RealUser, r.User)
}

func (fakeSecurityHost) IsAdmin(_ context.Context, r *pb.IsAdminRequest) (*pb.IsAdminResponse, error) {
	return &pb.IsAdminResponse{Admin: r.User == "hdfs"}, nil
}

func (fakeSecurityHost) VerifyDelegationToken(_ context.Context, r *pb.VerifyDelegationTokenRequest) (*pb.VerifyDelegationTokenResponse, error) {
	if string(r.Token.Password) != "good" {
		return nil, status.Error(codes.PermissionDenied, "delegation token rejected: password mismatch")
	}
	return &pb.VerifyDelegationTokenResponse{User: string(r.Token.Identifier), Owner: string(r.Token.Identifier) + "@" + realm}, nil
}

// whoami is a tiny public service: it answers with the user ActAs resolves.
func whoami(ctx context.Context, requested string) (string, error) {
	u, err := ActAs(ctx, requested)
	if err != nil {
		return "", status.Error(Code(err), err.Error())
	}
	return u, nil
}

func TestSecureAuthenticator(t *testing.T) {
	hostLis := bufconn.Listen(1 << 20)
	hs := grpc.NewServer()
	pb.RegisterSecurityHostServer(hs, fakeSecurityHost{})
	go func() { _ = hs.Serve(hostLis) }()
	defer hs.Stop()
	hostConn, err := grpc.NewClient("passthrough:///host", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return hostLis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	defer hostConn.Close()

	kt := serviceKeytab(t)
	kv, err := NewKerberosVerifierKeytab(kt, "newtricks/host@"+realm)
	if err != nil {
		t.Fatal(err)
	}
	a := &Secure{Kerberos: kv, Host: NewHost(hostConn)}
	call := func(auth, requested string) (string, codes.Code) {
		ctx := context.Background()
		if auth != "" {
			ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(MetadataKey, auth))
		}
		ctx, err := a.Authenticate(ctx, "/x")
		if err != nil {
			return "", status.Code(authStatus(err))
		}
		u, err := whoami(ctx, requested)
		return u, status.Code(err)
	}
	neg := func(user string) string {
		return "Negotiate " + base64.StdEncoding.EncodeToString(spnegoFor(t, kt, user, "newtricks/host", time.Now()))
	}
	tokKind := func(user, pw, kind string) string {
		return "HDFS-Token " + Token{Identifier: []byte(user), Password: []byte(pw), Kind: kind}.Encode()
	}
	tok := func(user, pw string) string { return tokKind(user, pw, HDFSDelegationKind) }
	for _, tc := range []struct {
		name, auth, requested, want string
		code                        codes.Code
	}{
		{"no credentials", "", "alice", "", codes.Unauthenticated},
		{"kerberos alice", neg("alice"), "", "alice", codes.OK},
		{"kerberos alice names herself", neg("alice"), "alice", "alice", codes.OK},
		{"bob claims alice", neg("bob"), "alice", "", codes.PermissionDenied},
		{"proxy user allowed", neg("svc"), "alice", "alice", codes.OK},
		{"proxy user not for bob", neg("svc"), "bob", "", codes.PermissionDenied},
		{"token alice", tok("alice", "good"), "", "alice", codes.OK},
		{"token bad password", tok("alice", "forged"), "", "", codes.Unauthenticated},
		{"token alice claims bob", tok("alice", "good"), "bob", "", codes.PermissionDenied},
		{"webhdfs kind", tokKind("alice", "good", "WEBHDFS delegation"), "", "alice", codes.OK},
		{"other kind", tokKind("alice", "good", "kms-dt"), "", "", codes.Unauthenticated},
		{"malformed", "Negotiate !!!", "", "", codes.Unauthenticated},
		{"unknown scheme", "Basic YTpi", "", "", codes.Unauthenticated},
	} {
		got, code := call(tc.auth, tc.requested)
		if got != tc.want || code != tc.code {
			t.Errorf("%s: got %q %v, want %q %v", tc.name, got, code, tc.want, tc.code)
		}
	}
	// Admin checks go to the daemon.
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MetadataKey, neg("hdfs")))
	ctx, err = a.Authenticate(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if u, err := RequireAdmin(ctx, ""); err != nil || u != "hdfs" {
		t.Fatalf("hdfs admin: %q %v", u, err)
	}
	ctx = metadata.NewIncomingContext(context.Background(), metadata.Pairs(MetadataKey, neg("alice")))
	ctx, _ = a.Authenticate(ctx, "/x")
	if _, err := RequireAdmin(ctx, ""); Code(err) != codes.PermissionDenied {
		t.Fatalf("alice admin: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	get := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	p := "newtricks.namenode.ext"
	for _, tc := range []struct {
		name string
		conf map[string]string
		ok   bool
	}{
		{"default simple", map[string]string{}, true},
		{"simple with tls", map[string]string{p + KeyTLSCert: "c", p + KeyTLSKey: "k"}, true},
		{"simple half tls", map[string]string{p + KeyTLSCert: "c"}, false},
		{"kerberos without tls", map[string]string{KeyAuthentication: "kerberos", p + KeyPrincipal: "n/h", p + KeyKeytab: "k"}, false},
		{"kerberos without keytab", map[string]string{KeyAuthentication: "kerberos", p + KeyTLSCert: "c", p + KeyTLSKey: "k"}, false},
		{"kerberos complete", map[string]string{KeyAuthentication: "Kerberos", p + KeyPrincipal: "n/h", p + KeyKeytab: "k",
			p + KeyTLSCert: "c", p + KeyTLSKey: "k"}, true},
		{"unknown", map[string]string{KeyAuthentication: "token"}, false},
		{"rate off", map[string]string{p + KeyRatePerUser: "0"}, true},
		{"rate not a number", map[string]string{p + KeyRatePerUser: "fast"}, false},
		{"negative burst", map[string]string{p + KeyRateBurst: "-1"}, false},
	} {
		err := ConfigFrom(get(tc.conf), p).Validate()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrBadConfig)) {
			t.Errorf("%s: Validate = %v", tc.name, err)
		}
	}
}
