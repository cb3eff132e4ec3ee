package authn

import (
	"bytes"
	"encoding/base64"
	"errors"
	"testing"
)

// Hadoop's WritableUtils.writeVLong encodings, worked out from its source.
func TestVLong(t *testing.T) {
	for _, tc := range []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0x00}}, {127, []byte{0x7f}}, {-112, []byte{0x90}}, {128, []byte{0x8f, 0x80}},
		{300, []byte{0x8e, 0x01, 0x2c}}, {-113, []byte{0x87, 0x70}}, {1 << 40, []byte{0x8a, 0x01, 0, 0, 0, 0, 0}},
	} {
		got := appendVLong(nil, tc.v)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("appendVLong(%d) = %x, want %x", tc.v, got, tc.want)
		}
		r := &writableReader{b: got}
		back, err := r.vlong()
		if err != nil || back != tc.v || len(r.b) != 0 {
			t.Errorf("vlong(%x) = %d, %v (left %d), want %d", got, back, err, len(r.b), tc.v)
		}
	}
}

func TestTokenRoundTrip(t *testing.T) {
	tok := Token{Identifier: bytes.Repeat([]byte{7}, 200), Password: []byte("0123456789abcdef0123"),
		Kind: HDFSDelegationKind, Service: "127.0.0.1:8020"}
	s := tok.Encode()
	got, err := DecodeToken(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Identifier, tok.Identifier) || !bytes.Equal(got.Password, tok.Password) ||
		got.Kind != tok.Kind || got.Service != tok.Service {
		t.Fatalf("round trip: %+v", got)
	}
	// Standard alphabet with padding decodes too (commons-codec accepts both).
	raw, _ := base64.RawURLEncoding.DecodeString(s)
	if _, err := DecodeToken(base64.StdEncoding.EncodeToString(raw)); err != nil {
		t.Fatalf("standard alphabet: %v", err)
	}
}

func TestDecodeTokenRejects(t *testing.T) {
	good := Token{Identifier: []byte("id"), Password: []byte("pw"), Kind: HDFSDelegationKind}.Encode()
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	for name, s := range map[string]string{
		"empty":          "",
		"not base64":     "!!!",
		"truncated":      base64.RawURLEncoding.EncodeToString(raw[:len(raw)-3]),
		"trailing bytes": base64.RawURLEncoding.EncodeToString(append(append([]byte{}, raw...), 1, 2)),
		"huge length":    base64.RawURLEncoding.EncodeToString([]byte{0x8c, 0x7f, 0xff, 0xff, 0xff}),
		"negative len":   base64.RawURLEncoding.EncodeToString([]byte{0xff}),
		"empty id":       Token{Password: []byte("pw")}.Encode(),
		"too long":       string(bytes.Repeat([]byte("A"), maxTokenString+1)),
	} {
		if _, err := DecodeToken(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: DecodeToken = %v, want ErrMalformed", name, err)
		}
	}
}

func TestParseCredential(t *testing.T) {
	tok := Token{Identifier: []byte("id"), Password: []byte("pw"), Kind: HDFSDelegationKind}.Encode()
	for _, tc := range []struct {
		name   string
		values []string
		scheme string
		bad    bool
	}{
		{"none", nil, "", false},
		{"negotiate", []string{"Negotiate " + base64.StdEncoding.EncodeToString([]byte{0x60, 1})}, SchemeNegotiate, false},
		{"negotiate any case", []string{"negotiate YQ=="}, SchemeNegotiate, false},
		{"token", []string{"HDFS-Token " + tok}, SchemeToken, false},
		{"two values", []string{"Negotiate YQ==", "Negotiate YQ=="}, "", true},
		{"no data", []string{"Negotiate"}, "", true},
		{"blank data", []string{"Negotiate   "}, "", true},
		{"basic", []string{"Basic YWxpY2U6cHc="}, "", true},
		{"bad base64", []string{"Negotiate ***"}, "", true},
		{"bad token", []string{"HDFS-Token ***"}, "", true},
	} {
		c, err := ParseCredential(tc.values)
		if tc.bad != (err != nil) || (err != nil && !errors.Is(err, ErrMalformed)) || c.Scheme != tc.scheme {
			t.Errorf("%s: ParseCredential = %+v, %v", tc.name, c.Scheme, err)
		}
	}
}

// FuzzParseCredential: whatever a caller puts in the metadata, parsing returns a credential
// or ErrMalformed, never panics, and a decoded token re-encodes to the same token.
func FuzzParseCredential(f *testing.F) {
	f.Add("Negotiate YGgGBisGAQUFAqBeMFygDTALBgkqhkiG9xIBAgKhBAMCAXY=")
	f.Add("HDFS-Token " + Token{Identifier: []byte("id"), Password: []byte("pw"), Kind: HDFSDelegationKind, Service: "s"}.Encode())
	f.Add("HDFS-Token jAAAAAAA")
	f.Add("Basic x")
	f.Fuzz(func(t *testing.T, v string) {
		c, err := ParseCredential([]string{v})
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if c.Scheme == SchemeToken {
			back, err := DecodeToken(c.Token.Encode())
			if err != nil || !bytes.Equal(back.Identifier, c.Token.Identifier) || back.Kind != c.Token.Kind {
				t.Fatalf("re-encode of %q: %+v, %v", v, back, err)
			}
		}
	})
}

// FuzzDecodeToken feeds raw Writable bytes to the token decoder.
func FuzzDecodeToken(f *testing.F) {
	f.Add([]byte{2, 'i', 'd', 2, 'p', 'w', 0, 0})
	f.Add([]byte{0x8c, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := DecodeToken(base64.RawURLEncoding.EncodeToString(b)); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
	})
}
