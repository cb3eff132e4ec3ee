package mirror

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// timeSetter sets modification times on dc-b. colinmarc/hdfs's Chtimes sends whole seconds,
// so with Config.DestHTTP the mirror uses WebHDFS SETTIMES (milliseconds, as distcp -pt
// preserves them), as the owner through the same proxy-user rule (user.name=<ProxyUser>,
// doas=<owner>); without it, mtimes are preserved to the second.
type timeSetter struct {
	base      string // "http://host:port", "" = RPC only
	proxyUser string
	http      *http.Client
}

func newTimeSetter(cfg Config, dial dialFunc) *timeSetter {
	ts := &timeSetter{proxyUser: cfg.ProxyUser}
	if cfg.DestHTTP != "" {
		ts.base = "http://" + cfg.DestHTTP
		ts.http = &http.Client{Timeout: time.Minute, Transport: &http.Transport{
			DialContext: dial, MaxIdleConnsPerHost: cfg.Concurrency, IdleConnTimeout: time.Minute,
		}}
	}
	return ts
}

func (ts *timeSetter) set(ctx context.Context, dc *hdfs.Client, owner, p string, mtime time.Time) error {
	if ts.base == "" {
		return dc.Chtimes(p, mtime, mtime)
	}
	q := url.Values{}
	q.Set("op", "SETTIMES")
	q.Set("modificationtime", strconv.FormatInt(mtime.UnixMilli(), 10))
	q.Set("accesstime", "-1")
	q.Set("user.name", ts.proxyUser)
	if owner != ts.proxyUser {
		q.Set("doas", owner)
	}
	u := ts.base + "/webhdfs/v1" + (&url.URL{Path: p}).EscapedPath() + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, nil)
	if err != nil {
		return err
	}
	resp, err := ts.http.Do(req)
	if err != nil {
		return fmt.Errorf("webhdfs settimes %s: %w", p, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("webhdfs settimes %s: %s: %s", p, resp.Status, body)
	}
	return nil
}
