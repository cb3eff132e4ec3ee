package authn

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// ErrMalformed is wrapped by every error decoding credentials a caller sent.
var ErrMalformed = errors.New("malformed credentials")

// HDFSDelegationKind is the kind of the tokens the NameNode issues (DelegationTokenIdentifier).
const HDFSDelegationKind = "HDFS_DELEGATION_TOKEN"

// Kinds WebHDFS gives the same tokens (WebHdfsConstants.WEBHDFS_TOKEN_KIND and SWEBHDFS_TOKEN_KIND).
const (
	webHDFSDelegationKind  = "WEBHDFS delegation"
	swebHDFSDelegationKind = "SWEBHDFS delegation"
)

// maxTokenString bounds an encoded token before it is decoded: real HDFS delegation tokens
// are about 100 characters; the limit only stops a caller from making us decode megabytes.
const maxTokenString = 8 << 10

// Token is a Hadoop security token (org.apache.hadoop.security.token.Token): the opaque
// identifier the issuer signed, its password (the HMAC), its kind and service.
type Token struct {
	Identifier []byte
	Password   []byte
	Kind       string
	Service    string
}

// DecodeToken parses the URL-safe string Hadoop's Token.encodeToUrlString produces (what
// `hdfs fetchdt`, WebHDFS GETDELEGATIONTOKEN and YARN containers hand around): base64 of the
// token's Writable form (vint-prefixed identifier and password, then kind and service as Text).
func DecodeToken(s string) (Token, error) {
	if s == "" {
		return Token{}, fmt.Errorf("%w: empty token", ErrMalformed)
	}
	if len(s) > maxTokenString {
		return Token{}, fmt.Errorf("%w: token of %d characters (limit %d)", ErrMalformed, len(s), maxTokenString)
	}
	// commons-codec's decoder, which Hadoop uses, accepts either alphabet, with or without padding.
	norm := strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(s), "=")
	b, err := base64.RawURLEncoding.DecodeString(norm)
	if err != nil {
		return Token{}, fmt.Errorf("%w: token is not base64: %v", ErrMalformed, err)
	}
	r := &writableReader{b: b}
	var t Token
	t.Identifier = r.bytes("identifier")
	t.Password = r.bytes("password")
	t.Kind = string(r.bytes("kind"))
	t.Service = string(r.bytes("service"))
	if r.err != nil {
		return Token{}, r.err
	}
	if len(r.b) != 0 {
		return Token{}, fmt.Errorf("%w: %d bytes after the token", ErrMalformed, len(r.b))
	}
	if len(t.Identifier) == 0 {
		return Token{}, fmt.Errorf("%w: token has an empty identifier", ErrMalformed)
	}
	return t, nil
}

// Encode returns the token as Hadoop's Token.encodeToUrlString does.
func (t Token) Encode() string {
	var b []byte
	for _, f := range [][]byte{t.Identifier, t.Password, []byte(t.Kind), []byte(t.Service)} {
		b = appendVLong(b, int64(len(f)))
		b = append(b, f...)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// writableReader reads Hadoop Writable fields, remembering the first error.
type writableReader struct {
	b   []byte
	err error
}

func (r *writableReader) bytes(field string) []byte {
	if r.err != nil {
		return nil
	}
	n, err := r.vlong()
	if err != nil {
		r.err = fmt.Errorf("%w: token %s length: %v", ErrMalformed, field, err)
		return nil
	}
	if n < 0 || n > int64(len(r.b)) {
		r.err = fmt.Errorf("%w: token %s length %d with %d bytes left", ErrMalformed, field, n, len(r.b))
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

// vlong is WritableUtils.readVLong: one byte for -112..127, else a length byte then the value
// big-endian (negative values stored complemented).
func (r *writableReader) vlong() (int64, error) {
	if len(r.b) == 0 {
		return 0, errors.New("truncated")
	}
	first := int8(r.b[0])
	r.b = r.b[1:]
	if first >= -112 {
		return int64(first), nil
	}
	negative := first < -120
	n := int(-112 - int(first))
	if negative {
		n = int(-120 - int(first))
	}
	if n > 8 || n > len(r.b) {
		return 0, errors.New("truncated vint")
	}
	var v int64
	for _, c := range r.b[:n] {
		v = v<<8 | int64(c)
	}
	r.b = r.b[n:]
	if negative {
		v = ^v
	}
	return v, nil
}

// appendVLong is WritableUtils.writeVLong.
func appendVLong(b []byte, i int64) []byte {
	if i >= -112 && i <= 127 {
		return append(b, byte(int8(i)))
	}
	l := -112
	if i < 0 {
		i = ^i
		l = -120
	}
	for tmp := i; tmp != 0; tmp >>= 8 {
		l--
	}
	b = append(b, byte(int8(l)))
	if l < -120 {
		l = -(l + 120)
	} else {
		l = -(l + 112)
	}
	for idx := l; idx != 0; idx-- {
		b = append(b, byte(i>>((idx-1)*8)))
	}
	return b
}
