package reader_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/reader"
)

func writeTestCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

var testToken = authn.Token{Identifier: []byte("id"), Password: []byte("pw"), Kind: authn.HDFSDelegationKind}.Encode()

// TestCredentialsBadInput: every inconsistent Auth is a configuration error saying what to
// fix, before anything is dialled.
func TestCredentialsBadInput(t *testing.T) {
	ca := writeTestCA(t)
	for _, tc := range []struct {
		name string
		a    reader.Auth
		msg  string
	}{
		{"token without TLS", reader.Auth{ClientConfig: authn.ClientConfig{Token: testToken}}, "need TLS"},
		{"keytab without TLS", reader.Auth{ClientConfig: authn.ClientConfig{Keytab: "/k", Principal: "alice", SPN: "newtricks/_HOST"}}, "need TLS"},
		{"kerberos and a token", reader.Auth{ClientConfig: authn.ClientConfig{CACert: ca, Keytab: "/k", Token: testToken}}, "not both"},
		{"keytab and ccache", reader.Auth{ClientConfig: authn.ClientConfig{CACert: ca, Keytab: "/k", CCache: "/c"}}, "not both"},
		{"kerberos without SPN", reader.Auth{ClientConfig: authn.ClientConfig{CACert: ca, Keytab: "/k", Principal: "alice"}}, "service principal"},
		{"missing krb5.conf", reader.Auth{ClientConfig: authn.ClientConfig{CACert: ca, Keytab: filepath.Join(t.TempDir(), "none"), Principal: "alice", SPN: "newtricks/_HOST"}}, "krb5.conf"},
		{"missing CA", reader.Auth{ClientConfig: authn.ClientConfig{CACert: filepath.Join(t.TempDir(), "none.pem")}}, "CA certificate"},
		{"bad token", reader.Auth{ClientConfig: authn.ClientConfig{CACert: ca, Token: "!!"}}, "token"},
		{"bad protection", reader.Auth{ClientConfig: authn.ClientConfig{CACert: ca}, DataTransferProtection: "secret"}, "data transfer protection"},
	} {
		c, err := reader.NewCredentials(tc.a)
		if !errors.Is(err, reader.ErrConfig) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want a configuration error saying %q", tc.name, err, tc.msg)
		}
		c.Close()
	}
	// A token serves the APIs but not colinmarc/hdfs's RPC: the HDFS side says so.
	c, err := reader.NewCredentials(reader.Auth{ClientConfig: authn.ClientConfig{CACert: ca, Token: testToken}})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Proves() {
		t.Error("a token proves an identity")
	}
	if _, err := c.HDFSOptions([]string{"nn:8020"}, "alice"); !errors.Is(err, reader.ErrTokenHDFS) {
		t.Errorf("HDFS with a token: %v, want ErrTokenHDFS", err)
	}
	// Without credentials: plaintext, simple authentication as the user named.
	var none *reader.Credentials
	if o, err := none.HDFSOptions([]string{"nn:8020"}, "alice"); err != nil || o.User != "alice" || o.KerberosClient != nil {
		t.Errorf("no credentials: %+v %v", o, err)
	}
	if _, err := reader.Open(t.Context(), reader.Config{Spec: nil, Auth: c}); !errors.Is(err, reader.ErrConfig) {
		t.Errorf("Open without a spec: %v", err)
	}
}

// TestCredentialsNeverCrossPlaintext: a reader with a credential, whose directory lists nodes
// that do not serve TLS, does not dial them (Stats.NodeError says why) and reads every sample
// from HDFS, the same bytes as the baseline.
func TestCredentialsNeverCrossPlaintext(t *testing.T) {
	fx := newFixture(t, nil)
	want := steps(t, fx.open(t, 0, 0, false, nil), 3)
	c, err := reader.NewCredentials(reader.Auth{ClientConfig: authn.ClientConfig{CACert: writeTestCA(t), Token: testToken}})
	if err != nil {
		t.Fatal(err)
	}
	r := fx.open(t, 0, 0, true, func(cfg *reader.Config) { cfg.Auth = c; cfg.User = "" })
	paths := compare(t, "plaintext nodes refused", steps(t, r, 3), want)
	st := r.Stats()
	t.Logf("paths %v, node error %q", paths, st.NodeError)
	if paths["local"] == 0 || paths["offload"]+paths["raw"] > 0 || st.Members != 0 {
		t.Errorf("paths %v, members %d: want every sample read here, no node used", paths, st.Members)
	}
	if !strings.Contains(st.NodeError, "credentials never cross plaintext") || !strings.Contains(st.NodeError, "does not serve TLS") {
		t.Errorf("NodeError %q: want the plaintext refusal", st.NodeError)
	}
	// Dial and Auth together are ambiguous.
	_, err = reader.Open(t.Context(), reader.Config{User: "alice", Spec: fx.spec, Auth: c, Locator: locator{fx.f, "alice"}, Store: store{fx.f},
		Dial: func(string) (*grpc.ClientConn, error) { return nil, errors.New("unused") }})
	if !errors.Is(err, reader.ErrConfig) || !strings.Contains(err.Error(), "Dial or Auth") {
		t.Errorf("Open with Dial and Auth: %v, want a configuration error", err)
	}
	// Without Auth the user is required.
	if _, err := reader.Open(t.Context(), reader.Config{Spec: fx.spec, Locator: locator{fx.f, "alice"}, Store: store{fx.f}}); !errors.Is(err, reader.ErrConfig) {
		t.Errorf("Open without a user or credentials: %v", err)
	}
}
