package authn

import (
	"errors"
	"testing"

	"github.com/jcmturner/gokrb5/v8/client"
)

// TestPerHost: no credential may go over plaintext; with TLS, one Kerberos credential per
// service principal (the pattern's _HOST is the host), the same token to every host.
func TestPerHost(t *testing.T) {
	plain := &PerHost{}
	if opts, err := plain.Options("dn1", false, "newtricks/_HOST"); err != nil || len(opts) != 1 {
		t.Errorf("plaintext without credentials: %d options, %v", len(opts), err)
	}
	tok := &PerHost{Token: "t"}
	if _, err := tok.Options("dn1", false, ""); !errors.Is(err, ErrPlaintext) {
		t.Errorf("a token over plaintext: %v, want ErrPlaintext", err)
	}
	if opts, err := tok.Options("dn1", true, ""); err != nil || len(opts) != 2 {
		t.Errorf("a token over TLS: %d options, %v", len(opts), err)
	}
	krb := &PerHost{Krb: &client.Client{}}
	if _, err := krb.Options("dn1", false, "newtricks/_HOST"); !errors.Is(err, ErrPlaintext) {
		t.Errorf("Kerberos over plaintext: %v, want ErrPlaintext", err)
	}
	if _, err := krb.Options("dn1", true, ""); !errors.Is(err, ErrBadConfig) {
		t.Errorf("Kerberos without a service principal: %v", err)
	}
	for _, h := range []string{"dn1.example.com", "DN2.example.com", "dn1.example.com"} {
		if _, err := krb.Options(h, true, "newtricks/_HOST@EXAMPLE.COM"); err != nil {
			t.Fatal(err)
		}
	}
	if len(krb.creds) != 2 || krb.creds["newtricks/dn1.example.com"] == nil || krb.creds["newtricks/dn2.example.com"] == nil {
		t.Errorf("credentials by SPN: %v", krb.creds)
	}
}

func TestHostPattern(t *testing.T) {
	for in, want := range map[string]string{
		"newtricks/nn1.example.com@EXAMPLE.COM": "newtricks/_HOST@EXAMPLE.COM",
		"newtricks/localhost":                   "newtricks/_HOST",
		"newtricks/_HOST@R":                     "newtricks/_HOST@R",
		"newtricks":                             "newtricks",
	} {
		if got := HostPattern(in); got != want {
			t.Errorf("HostPattern(%q) = %q, want %q", in, got, want)
		}
	}
	if HostOf("dn1:9890") != "dn1" || HostOf("[::1]:9890") != "::1" || HostOf("dn1") != "dn1" {
		t.Error("HostOf")
	}
}
