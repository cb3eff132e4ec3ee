package authn

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// MetadataKey is the gRPC metadata key that carries a caller's credentials, like HTTP's
// Authorization header: "Negotiate <base64 SPNEGO token>" (Kerberos, as HTTP SPNEGO sends it)
// or "HDFS-Token <URL-safe token string>" (an HDFS delegation token as Hadoop encodes it).
const MetadataKey = "authorization"

// Schemes of MetadataKey values.
const (
	SchemeNegotiate = "Negotiate"
	SchemeToken     = "HDFS-Token"
)

// maxSPNEGO bounds a SPNEGO token before it is decoded (a Kerberos AP-REQ with a large PAC is
// a few KiB; gRPC's own header limit is 8 KiB by default).
const maxSPNEGO = 16 << 10

// Credential is what a call's MetadataKey value says, decoded but not verified.
type Credential struct {
	Scheme string
	// SPNEGO is the GSS-API token (SchemeNegotiate).
	SPNEGO []byte
	// Token is the delegation token (SchemeToken).
	Token Token
}

// ParseCredential decodes the values of MetadataKey. No value returns a zero Credential and
// no error (the caller sent no credentials); more than one value, an unknown scheme or a
// malformed value is an error wrapping ErrMalformed.
func ParseCredential(values []string) (Credential, error) {
	switch len(values) {
	case 0:
		return Credential{}, nil
	case 1:
	default:
		return Credential{}, fmt.Errorf("%w: %d %s values, want one", ErrMalformed, len(values), MetadataKey)
	}
	scheme, data, ok := strings.Cut(strings.TrimSpace(values[0]), " ")
	data = strings.TrimSpace(data)
	if !ok || data == "" {
		return Credential{}, fmt.Errorf("%w: %s wants \"<scheme> <credentials>\"", ErrMalformed, MetadataKey)
	}
	switch {
	case strings.EqualFold(scheme, SchemeNegotiate):
		if len(data) > maxSPNEGO {
			return Credential{}, fmt.Errorf("%w: SPNEGO token of %d characters (limit %d)", ErrMalformed, len(data), maxSPNEGO)
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return Credential{}, fmt.Errorf("%w: SPNEGO token is not base64: %v", ErrMalformed, err)
		}
		if len(b) == 0 {
			return Credential{}, fmt.Errorf("%w: empty SPNEGO token", ErrMalformed)
		}
		return Credential{Scheme: SchemeNegotiate, SPNEGO: b}, nil
	case strings.EqualFold(scheme, SchemeToken):
		t, err := DecodeToken(data)
		if err != nil {
			return Credential{}, err
		}
		return Credential{Scheme: SchemeToken, Token: t}, nil
	}
	return Credential{}, fmt.Errorf("%w: unknown %s scheme %q (want %s or %s)", ErrMalformed, MetadataKey,
		truncate(scheme, 32), SchemeNegotiate, SchemeToken)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
