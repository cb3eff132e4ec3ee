package mirror

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/jcmturner/gokrb5/v8/spnego"
)

// timeSetter sets modification times on dc-b (and renames, joins ranges) over WebHDFS. With
// Kerberos it speaks HTTPS (Config.DestHTTP is then dc-b's dfs.namenode.https-address, its
// certificate checked against Config.DestHTTPCA or the system's CAs): SPNEGO and doas never
// cross the WAN in plain text. colinmarc/hdfs's Chtimes sends whole seconds,
// so with Config.DestHTTP the mirror uses WebHDFS SETTIMES (milliseconds, as distcp -pt
// preserves them), as the owner through the same proxy-user rule (user.name=<ProxyUser>,
// doas=<owner>); without it, mtimes are preserved to the second.
type timeSetter struct {
	base      string // "http://host:port", "" = RPC only
	proxyUser string
	http      *http.Client
	spnego    *spnego.Client // Kerberos: SPNEGO as the mirror's principal, doas=<owner>
}

func newTimeSetter(cfg Config, dial dialFunc, krb *krbAuth) (*timeSetter, error) {
	ts := &timeSetter{proxyUser: cfg.ProxyUser}
	if cfg.DestHTTP != "" {
		tr := &http.Transport{DialContext: dial, MaxIdleConnsPerHost: cfg.Concurrency, IdleConnTimeout: time.Minute}
		ts.base = "http://" + cfg.DestHTTP
		if cfg.Kerberos != nil {
			tc, err := destTLS(cfg)
			if err != nil {
				return nil, err
			}
			tr.TLSClientConfig = tc
			ts.base = "https://" + cfg.DestHTTP
		}
		ts.http = &http.Client{Timeout: time.Minute, Transport: tr,
			// A redirect could carry the SPNEGO header elsewhere: WebHDFS metadata
			// operations answer directly.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if krb != nil {
			spn, _, _ := strings.Cut(cfg.Kerberos.DestHTTPSPN, "@")
			ts.spnego = spnego.NewClient(krb.cl, ts.http, spn)
		}
	}
	return ts, nil
}

// destTLS is the TLS configuration of WebHDFS calls to dc-b: TLS 1.2 or later, the server
// name of DestHTTP, the CAs of DestHTTPCA (PEM) or the system's.
func destTLS(cfg Config) (*tls.Config, error) {
	host, _, err := net.SplitHostPort(cfg.DestHTTP)
	if err != nil {
		return nil, fmt.Errorf("mirror: newtricks.mirror.dest.http %q: %w", cfg.DestHTTP, err)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	if cfg.DestHTTPCA != "" {
		pem, err := os.ReadFile(cfg.DestHTTPCA)
		if err != nil {
			return nil, fmt.Errorf("mirror: newtricks.mirror.dest.http.tls.ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mirror: newtricks.mirror.dest.http.tls.ca %s: no PEM certificate", cfg.DestHTTPCA)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

func (ts *timeSetter) set(ctx context.Context, dc *hdfs.Client, owner, p string, mtime time.Time) error {
	if ts.base == "" {
		return dc.Chtimes(p, mtime, mtime)
	}
	q := url.Values{}
	q.Set("modificationtime", strconv.FormatInt(mtime.UnixMilli(), 10))
	q.Set("accesstime", "-1")
	_, err := ts.do(ctx, http.MethodPut, "SETTIMES", owner, p, q)
	return err
}

// concat joins srcs (in order) onto the end of target with WebHDFS CONCAT, as the owner.
func (ts *timeSetter) concat(ctx context.Context, owner, target string, srcs []string) error {
	if ts.base == "" {
		return fmt.Errorf("concat of %s needs newtricks.mirror.dest.http", target)
	}
	if len(srcs) == 0 {
		return nil
	}
	q := url.Values{}
	q.Set("sources", strings.Join(srcs, ","))
	_, err := ts.do(ctx, http.MethodPost, "CONCAT", owner, target, q)
	return err
}

// rename moves src to dst as the owner. With WebHDFS it is one request (rename2 without
// OVERWRITE: fails if dst exists, never replaces or nests into it); colinmarc/hdfs's Rename
// looks dst up first (another round trip) and then renames with OVERWRITE. A missing parent
// of dst is os.ErrNotExist, an existing dst os.ErrExist.
func (ts *timeSetter) rename(ctx context.Context, dc *hdfs.Client, owner, src, dst string) error {
	if ts.base == "" {
		return dc.Rename(src, dst)
	}
	q := url.Values{}
	q.Set("destination", dst)
	q.Set("renameoptions", "NONE")
	b, err := ts.do(ctx, http.MethodPut, "RENAME", owner, src, q)
	if err != nil {
		return err
	}
	var r struct {
		Boolean bool `json:"boolean"`
	}
	if json.Unmarshal(b, &r) == nil && !r.Boolean {
		return fmt.Errorf("webhdfs rename %s to %s: refused", src, dst)
	}
	return nil
}

// do runs one WebHDFS operation on dc-b's NameNode as the owner, through the proxy-user rule
// (user.name=<ProxyUser>, doas=<owner>), and returns the response body. A RemoteException
// names its Java exception in the error; FileNotFoundException wraps os.ErrNotExist and
// FileAlreadyExistsException os.ErrExist.
func (ts *timeSetter) do(ctx context.Context, method, op, owner, p string, q url.Values) ([]byte, error) {
	q.Set("op", op)
	if ts.spnego != nil {
		// Kerberos: SPNEGO authenticates the mirror's principal (the real user).
		q.Set("doas", owner)
	} else {
		q.Set("user.name", ts.proxyUser)
		if owner != ts.proxyUser {
			q.Set("doas", owner)
		}
	}
	u := ts.base + "/webhdfs/v1" + (&url.URL{Path: p}).EscapedPath() + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	var resp *http.Response
	if ts.spnego != nil {
		resp, err = ts.spnego.Do(req)
	} else {
		resp, err = ts.http.Do(req)
	}
	if err != nil {
		return nil, fmt.Errorf("webhdfs %s %s: %w", strings.ToLower(op), p, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusOK {
		return body, nil
	}
	var re struct {
		RemoteException struct {
			Exception, Message string
		}
	}
	json.Unmarshal(body, &re)
	err = fmt.Errorf("webhdfs %s %s: %s: %s", strings.ToLower(op), p, resp.Status, bytes.TrimSpace(body))
	switch re.RemoteException.Exception {
	case "FileNotFoundException":
		err = fmt.Errorf("%w: %v", os.ErrNotExist, err)
	case "FileAlreadyExistsException":
		err = fmt.Errorf("%w: %v", os.ErrExist, err)
	}
	return nil, err
}
