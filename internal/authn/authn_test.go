package authn

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

type fakeImp struct {
	proxies map[[2]string]bool // {real, user}
	admins  map[string]bool
}

func (f fakeImp) AuthorizeProxy(_ context.Context, real, user, _ string) error {
	if f.proxies[[2]string{real, user}] {
		return nil
	}
	return errors.New("not allowed by hadoop.proxyuser rules")
}

func (f fakeImp) IsAdmin(_ context.Context, user string) (bool, error) { return f.admins[user], nil }

func TestActAs(t *testing.T) {
	imp := fakeImp{proxies: map[[2]string]bool{{"svc", "alice"}: true}, admins: map[string]bool{"hdfs": true}}
	kerb := func(u string) context.Context {
		return NewContext(context.Background(), Identity{User: u, Method: MethodKerberos}, "10.0.0.1:1234", imp)
	}
	simple := NewContext(context.Background(), Identity{Method: MethodSimple}, "", nil)
	tests := []struct {
		name      string
		ctx       context.Context
		requested string
		want      string
		code      codes.Code
	}{
		{"no interceptor", context.Background(), "alice", "", codes.Unauthenticated},
		{"simple trusts the name", simple, "alice", "alice", codes.OK},
		{"simple needs a name", simple, "", "", codes.InvalidArgument},
		{"kerberos, empty requested", kerb("bob"), "", "bob", codes.OK},
		{"kerberos, same name", kerb("bob"), "bob", "bob", codes.OK},
		{"kerberos, impersonation refused", kerb("bob"), "alice", "", codes.PermissionDenied},
		{"kerberos, proxy user allowed", kerb("svc"), "alice", "alice", codes.OK},
		{"kerberos, proxy user not for that user", kerb("svc"), "hdfs", "", codes.PermissionDenied},
		{"proven identity without a user", kerb(""), "", "", codes.Unauthenticated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ActAs(tc.ctx, tc.requested)
			if Code(err) != tc.code || got != tc.want {
				t.Fatalf("ActAs(%q) = %q, %v (code %v); want %q, %v", tc.requested, got, err, Code(err), tc.want, tc.code)
			}
		})
	}
}

func TestRequireAdmin(t *testing.T) {
	imp := fakeImp{admins: map[string]bool{"hdfs": true}}
	ctx := NewContext(context.Background(), Identity{User: "hdfs", Method: MethodKerberos}, "", imp)
	if u, err := RequireAdmin(ctx, ""); err != nil || u != "hdfs" {
		t.Fatalf("admin: %q, %v", u, err)
	}
	ctx = NewContext(context.Background(), Identity{User: "alice", Method: MethodKerberos}, "", imp)
	if _, err := RequireAdmin(ctx, ""); Code(err) != codes.PermissionDenied {
		t.Fatalf("non-admin: %v", err)
	}
	noImp := NewContext(context.Background(), Identity{Method: MethodSimple}, "", nil)
	if _, err := RequireAdmin(noImp, "hdfs"); Code(err) != codes.PermissionDenied {
		t.Fatalf("no impersonator: %v", err)
	}
}

func TestRequireAdminView(t *testing.T) {
	imp := fakeImp{admins: map[string]bool{"hdfs": true}}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		code codes.Code
	}{
		{"no interceptor", context.Background(), codes.Unauthenticated},
		{"simple: open, names are not proven", NewContext(context.Background(), Identity{Method: MethodSimple}, "", nil), codes.OK},
		{"kerberos admin", NewContext(context.Background(), Identity{User: "hdfs", Method: MethodKerberos}, "", imp), codes.OK},
		{"kerberos user", NewContext(context.Background(), Identity{User: "alice", Method: MethodKerberos}, "", imp), codes.PermissionDenied},
		{"token user", NewContext(context.Background(), Identity{User: "alice", Method: MethodToken}, "", imp), codes.PermissionDenied},
	} {
		if err := RequireAdminView(tc.ctx); Code(err) != tc.code {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.code)
		}
	}
}

func TestReplaceHost(t *testing.T) {
	for _, tc := range []struct{ principal, host, want string }{
		{"newtricks/_HOST@EXAMPLE.COM", "NN1.Example.com", "newtricks/nn1.example.com@EXAMPLE.COM"},
		{"newtricks/fixed@EXAMPLE.COM", "other", "newtricks/fixed@EXAMPLE.COM"},
	} {
		got, err := ReplaceHost(tc.principal, tc.host)
		if err != nil || got != tc.want {
			t.Errorf("ReplaceHost(%q, %q) = %q, %v; want %q", tc.principal, tc.host, got, err, tc.want)
		}
	}
	// A wildcard address names no host: this machine's name is used, never "0.0.0.0".
	got, err := ReplaceHost("newtricks/_HOST@EXAMPLE.COM", "0.0.0.0")
	if err != nil || strings.Contains(got, "0.0.0.0") || strings.Contains(got, "_HOST") {
		t.Errorf("wildcard: %q, %v", got, err)
	}
}

func TestClientConfigRefuses(t *testing.T) {
	for name, c := range map[string]ClientConfig{
		"keytab and token":     {CACert: "ca.pem", Keytab: "k", Token: "t"},
		"kerberos without TLS": {Keytab: "k", Principal: "alice", SPN: "newtricks/h"},
		"token without TLS":    {Token: "t"},
		"missing CA file":      {CACert: "/nonexistent/ca.pem"},
	} {
		if _, _, err := c.DialOptions(); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: %v, want ErrBadConfig", name, err)
		}
	}
	if opts, done, err := (ClientConfig{}).DialOptions(); err != nil || len(opts) != 0 {
		t.Fatalf("plain client: %v %v", opts, err)
	} else {
		done()
	}
}
