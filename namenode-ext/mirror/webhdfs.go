package mirror

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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

// concat joins srcs (in order) onto the end of target with WebHDFS CONCAT, as the owner.
func (ts *timeSetter) concat(ctx context.Context, owner, target string, srcs []string) error {
	if ts.base == "" {
		return fmt.Errorf("concat of %s needs newtricks.mirror.dest.http", target)
	}
	if len(srcs) == 0 {
		return nil
	}
	q := url.Values{}
	q.Set("op", "CONCAT")
	q.Set("sources", strings.Join(srcs, ","))
	q.Set("user.name", ts.proxyUser)
	if owner != ts.proxyUser {
		q.Set("doas", owner)
	}
	u := ts.base + "/webhdfs/v1" + (&url.URL{Path: target}).EscapedPath() + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	resp, err := ts.http.Do(req)
	if err != nil {
		return fmt.Errorf("webhdfs concat %s: %w", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("webhdfs concat %s: %s: %s", target, resp.Status, body)
	}
	return nil
}
