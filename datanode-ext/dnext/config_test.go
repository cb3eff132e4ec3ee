package dnext

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

	"github.com/newtricks/newtricks/datanode-ext/offload"
	"github.com/newtricks/newtricks/internal/coproc"
)

// TestClientConfig: namenode-ext's addresses are read and checked; datanode-ext talks
// plaintext under simple authentication unless a CA is configured, TLS then; a kerberos
// cluster without its keytab refuses to configure (its calls would carry no credentials).
func TestClientConfig(t *testing.T) {
	cfg, err := ConfigFromConf(coproc.Conf{KeyNameNodeAPI: " nn1:9880, nn2:9880 "})
	if err != nil || strings.Join(cfg.NameNodeAPI, " ") != "nn1:9880 nn2:9880" {
		t.Fatalf("%v %v", cfg.NameNodeAPI, err)
	}
	for _, bad := range []string{"nn1", "nn1:0", ":9880", "nn1:99999"} {
		if _, err := ConfigFromConf(coproc.Conf{KeyNameNodeAPI: bad}); !errors.Is(err, coproc.ErrBadConfig) || !strings.Contains(err.Error(), KeyNameNodeAPI) {
			t.Errorf("%q: %v, want a bad configuration naming the key", bad, err)
		}
	}

	plain, err := newClientAuth(coproc.Conf{}, Config{}, "127.0.0.1")
	if err != nil || plain.tls != nil || plain.self() == "" {
		t.Fatalf("simple: tls %v, self %q, %v", plain.tls, plain.self(), err)
	}
	if _, err := plain.forPeer(offload.Endpoint{UUID: "dn", Addr: "10.0.0.1:9890"}); err != nil {
		t.Errorf("plaintext peer: %v", err)
	}

	ca := filepath.Join(t.TempDir(), "ca.pem")
	writeCA(t, ca)
	withCA, err := newClientAuth(coproc.Conf{}, Config{ClientCA: ca}, "127.0.0.1")
	if err != nil || withCA.tls == nil || withCA.tls.RootCAs == nil {
		t.Fatalf("with a CA: %+v %v", withCA, err)
	}
	if _, err := newClientAuth(coproc.Conf{}, Config{ClientCA: filepath.Join(t.TempDir(), "none.pem")}, ""); !errors.Is(err, coproc.ErrBadConfig) {
		t.Errorf("a missing CA file: %v", err)
	}

	_, err = newClientAuth(coproc.Conf{"hadoop.security.authentication": "kerberos"}, Config{}, "127.0.0.1")
	if !errors.Is(err, coproc.ErrBadConfig) || !strings.Contains(err.Error(), ".kerberos.keytab") {
		t.Errorf("kerberos without a keytab: %v", err)
	}
	secure := &clientAuth{secure: true, tls: withCA.tls}
	if _, err := secure.forPeer(offload.Endpoint{UUID: "dn", Addr: "10.0.0.1:9890"}); err == nil || !strings.Contains(err.Error(), "plaintext") {
		t.Errorf("kerberos credentials to a peer without TLS: %v, want a refusal", err)
	}
	if _, err := secure.forPeer(offload.Endpoint{UUID: "dn", Addr: "10.0.0.1:9890", Hostname: "dn1", TLS: true}); err != nil {
		t.Errorf("TLS peer: %v", err)
	}
}

func writeCA(t *testing.T, p string) {
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
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
