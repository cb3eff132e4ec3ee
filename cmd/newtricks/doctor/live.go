package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const (
	nnHookBean = "Hadoop:service=NameNode,name=NewtricksNameNodeHook"
	dnHookBean = "Hadoop:service=DataNode,name=NewtricksDataNodeHook"
)

// bean fetches the first JMX bean matching query from addr's /jmx; nil if there is none.
// addr is host:port (plain HTTP) or a base URL (https://host:port).
func (d *doctor) bean(ctx context.Context, addr, query string) (map[string]json.RawMessage, error) {
	var r struct {
		Beans []map[string]json.RawMessage `json:"beans"`
	}
	if err := d.getDaemon(ctx, addr, "/jmx?qry="+url.QueryEscape(query), func(body io.Reader) error {
		return json.NewDecoder(body).Decode(&r)
	}); err != nil {
		return nil, err
	}
	if len(r.Beans) == 0 {
		return nil, nil
	}
	return r.Beans[0], nil
}

// getDaemon GETs path from a daemon's web server and hands the body to decode; an HTTP error
// status or a body decode cannot read is an error naming the URL. addr is host:port (plain
// HTTP) or a base URL (https://host:port).
func (d *doctor) getDaemon(ctx context.Context, addr, path string, decode func(io.Reader) error) error {
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := statusErr(req, resp); err != nil {
		return err
	}
	if err := decode(resp.Body); err != nil {
		return fmt.Errorf("GET %s: %v", req.URL, err)
	}
	return nil
}

func num(b map[string]json.RawMessage, k string) int64 {
	var f float64
	_ = json.Unmarshal(b[k], &f)
	return int64(f)
}

func str(b map[string]json.RawMessage, k string) string {
	var s string
	_ = json.Unmarshal(b[k], &s)
	return s
}

// nameNodeHTTP is where the NameNode's web server listens, as seen from this host.
func (d *doctor) nameNodeHTTP() string {
	if d.o.NameNodeHTTP != "" {
		return d.o.NameNodeHTTP
	}
	addr := d.conf.Get("dfs.namenode.http-address", "0.0.0.0:9870")
	scheme := ""
	if strings.EqualFold(d.conf.Get("dfs.http.policy", "HTTP_ONLY"), "HTTPS_ONLY") {
		addr, scheme = d.conf.Get("dfs.namenode.https-address", "0.0.0.0:9871"), "https://"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if u, err := url.Parse(d.conf.Get("fs.defaultFS", "")); err == nil && u.Hostname() != "" {
			host = u.Hostname()
		}
	}
	return scheme + net.JoinHostPort(host, port)
}

func (d *doctor) checkLive(ctx context.Context) {
	addr := d.nameNodeHTTP()
	const key = "dfs.namenode.http-address"
	status, err := d.bean(ctx, addr, "Hadoop:service=NameNode,name=NameNodeStatus")
	if err != nil || status == nil {
		d.r.fail("namenode.reachable", key, "NameNode web server at %s does not answer JMX: %v (is it running? pass --namenode-http HOST:PORT or --offline)", addr, errOrNoBean(err))
		return
	}
	d.r.pass("namenode.reachable", key, "NameNode at %s is %s", addr, strings.ToLower(str(status, "State")))
	info, err := d.bean(ctx, addr, "Hadoop:service=NameNode,name=NameNodeInfo")
	if err != nil || info == nil {
		d.r.fail("namenode.reachable", key, "NameNodeInfo at %s: %v", addr, errOrNoBean(err))
		return
	}
	if sm := str(info, "Safemode"); sm != "" {
		d.r.warn("namenode.safemode", "", "NameNode is in safe mode: %s (hints cannot change replication until it leaves)", sm)
	} else {
		d.r.pass("namenode.safemode", "", "NameNode is out of safe mode")
	}
	live := map[string]struct {
		InfoAddr       string `json:"infoAddr"`
		InfoSecureAddr string `json:"infoSecureAddr"`
	}{}
	_ = json.Unmarshal([]byte(str(info, "LiveNodes")), &live)
	dead := map[string]json.RawMessage{}
	_ = json.Unmarshal([]byte(str(info, "DeadNodes")), &dead)
	switch {
	case len(live) == 0:
		d.r.fail("datanodes.live", "", "no live DataNodes")
	case len(dead) > 0:
		d.r.warn("datanodes.live", "", "%d live, %d dead DataNodes", len(live), len(dead))
	default:
		d.r.pass("datanodes.live", "", "%d live DataNodes", len(live))
	}

	d.compareRunning(ctx, "the running NameNode", addr, d.nameNodeKeys)

	hook, err := d.hookBean(ctx, addr, nnHookBean)
	switch {
	case err != nil:
		d.r.fail("namenode.hook", "", "JMX %s: %v", nnHookBean, err)
	case hook == nil && d.nnEnabled:
		d.r.fail("namenode.hook", keyNNPlugins, "the running NameNode has no %s bean: the hook is not loaded (jar not on its classpath, or %s changed since its start: restart it)", nnHookBean, keyNNPlugins)
	case hook == nil:
		// not enabled here and not running: nothing to say beyond the config findings
	default:
		d.checkHook(ctx, "namenode", "NameNode", hook)
	}

	names := make([]string, 0, len(live))
	for n := range live {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !d.dnEnabled {
			break
		}
		// An HTTPS-only DataNode (dfs.http.policy=HTTPS_ONLY) has no HTTP port.
		dn := live[n].InfoAddr
		if _, port, err := net.SplitHostPort(dn); (err != nil || port == "0") && live[n].InfoSecureAddr != "" {
			dn = "https://" + live[n].InfoSecureAddr
		}
		hook, err := d.hookBean(ctx, dn, dnHookBean)
		if err == nil {
			d.compareRunning(ctx, "DataNode "+n, dn, d.dataNodeKeys)
		}
		switch {
		case err != nil:
			d.r.warn("datanode.hook", "", "DataNode %s: JMX at %s does not answer: %v", n, dn, err)
		case hook == nil:
			d.r.fail("datanode.hook", keyDNPlugins, "DataNode %s has no %s bean: the hook is not loaded there (jar on its classpath? %s set there? restarted since?)", n, dnHookBean, keyDNPlugins)
		default:
			d.checkHook(ctx, "datanode", "DataNode "+n, hook)
		}
	}

	d.checkMirrorDest(ctx)

	metrics := append([]string(nil), d.o.Metrics...)
	if d.nnEnabled {
		if m := d.conf.Get(nnSide.metKey, nnSide.metDef); m != "" && !strings.HasSuffix(m, ":0") && !contains(metrics, m) {
			metrics = append(metrics, m)
		}
	}
	// On a DataNode host, this host's datanode-ext too.
	if d.dnEnabled && dataNodeHere(live) {
		if m := d.conf.Get(dnSide.metKey, dnSide.metDef); m != "" && !strings.HasSuffix(m, ":0") && !contains(metrics, m) {
			metrics = append(metrics, m)
		}
	}
	for _, m := range metrics {
		if d.o.Remote && !contains(d.o.Metrics, m) && onLoopback(m) {
			continue // the daemon host's loopback, not this host's
		}
		d.checkMetrics(ctx, m)
	}
}

// onLoopback reports whether host:port addr names a loopback address.
func onLoopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(h)
	return h == "localhost" || (ip != nil && ip.IsLoopback())
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func errOrNoBean(err error) error {
	if err == nil {
		return fmt.Errorf("no such bean")
	}
	return err
}

// jmxSettle is how long hookBean waits for a hook's counters to show a first start attempt.
// Hadoop's metrics system refreshes what JMX shows every 10 s (the default period), so a
// daemon that just started shows zeros for a while.
var jmxSettle = 20 * time.Second

// hookBean reads a hook's bean; while it shows no start attempt at all (fresh daemon, JMX
// cache not refreshed yet, or the co-process still in its handshake) it reads again for up to
// jmxSettle.
func (d *doctor) hookBean(ctx context.Context, addr, query string) (map[string]json.RawMessage, error) {
	deadline := time.Now().Add(jmxSettle)
	for {
		b, err := d.bean(ctx, addr, query)
		if err != nil || b == nil {
			return b, err
		}
		if num(b, "CoprocessHealthy") == 1 || num(b, "CoprocessStarts")+num(b, "CoprocessStartFailures") > 0 || time.Now().After(deadline) {
			return b, nil
		}
		select {
		case <-ctx.Done():
			return b, nil
		case <-time.After(time.Second):
		}
	}
}

// checkHook reads one hook's JMX counters.
func (d *doctor) checkHook(ctx context.Context, kind, who string, b map[string]json.RawMessage) {
	check := kind + ".coprocess"
	binKey := keyNNBinary
	if kind == "datanode" {
		binKey = keyDNBinary
	}
	logHint := fmt.Sprintf("see newtricks-%s-ext.log in newtricks.ext.log.dir and the daemon's log (lines with 'newtricks:')", kind)
	starts, restarts, failures := num(b, "CoprocessStarts"), num(b, "CoprocessRestarts"), num(b, "CoprocessStartFailures")
	switch {
	case num(b, "CoprocessHealthy") != 1 && starts+failures == 0:
		d.r.fail(check, binKey, "%s: the hook has not started %s-ext (no start attempt after %s); %s", who, kind, jmxSettle, logHint)
	case num(b, "CoprocessHealthy") != 1:
		d.r.fail(check, binKey, "%s: %s-ext is not healthy (%d starts, %d failed starts, %d restarts); %s",
			who, kind, starts, failures, restarts, logHint)
	case restarts > 0:
		d.r.warn(check, binKey, "%s: %s-ext is healthy but restarted %d times since the daemon started; %s", who, kind, restarts, logHint)
	default:
		d.r.pass(check, binKey, "%s: %s-ext is healthy (%d start)", who, kind, starts)
	}
	if kind != "namenode" {
		return
	}
	if dropped := num(b, "AuditDropped"); dropped > 0 {
		d.r.warn("namenode.audit-queue", "newtricks.audit.queue.capacity",
			"%d audit events dropped because namenode-ext fell behind (queue %d now); raise newtricks.audit.queue.capacity or find what slows namenode-ext",
			dropped, num(b, "AuditQueueSize"))
	} else {
		d.r.pass("namenode.audit-queue", "newtricks.audit.queue.capacity", "no audit events dropped (%d queued so far)", num(b, "AuditQueued"))
	}
	if gaps := num(b, "NamespaceGaps"); gaps > 0 {
		d.r.warn("namenode.events", "", "the edit-log tailer skipped missing edits %d times (edits purged before namenode-ext read them)", gaps)
	}
}

// checkMetrics scrapes one co-process's /metrics.
func (d *doctor) checkMetrics(ctx context.Context, addr string) {
	const check = "coprocess.metrics"
	fams, err := Scrape(ctx, d.http, addr)
	if err != nil {
		d.r.fail(check, "", "%v", err)
		return
	}
	n := 0
	for name := range fams {
		if strings.HasPrefix(name, "newtricks_") {
			n++
		}
	}
	up := ""
	if f := fams["process_start_time_seconds"]; len(f) > 0 {
		start := time.Unix(int64(f[0]), 0)
		up = fmt.Sprintf(", up %s", time.Since(start).Round(time.Second))
	}
	if n == 0 {
		d.r.fail(check, "", "http://%s/metrics answers but has no newtricks_ metrics: is this a newtricks co-process?", addr)
		return
	}
	d.r.pass(check, "", "http://%s/metrics: %d newtricks metric families%s", addr, n, up)
}

// Scrape fetches and parses http://addr/metrics (Prometheus text format) into each metric
// family's sample values (counters, gauges, untyped; a histogram's or summary's sample count).
func Scrape(ctx context.Context, c *http.Client, addr string) (map[string][]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape http://%s/metrics: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape http://%s/metrics: %s", addr, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape http://%s/metrics: %w", addr, err)
	}
	out := make(map[string][]float64, len(fams))
	for name, f := range fams {
		vals := []float64{}
		for _, m := range f.GetMetric() {
			switch {
			case m.Counter != nil:
				vals = append(vals, m.GetCounter().GetValue())
			case m.Gauge != nil:
				vals = append(vals, m.GetGauge().GetValue())
			case m.Untyped != nil:
				vals = append(vals, m.GetUntyped().GetValue())
			case m.Histogram != nil:
				vals = append(vals, float64(m.GetHistogram().GetSampleCount()))
			case m.Summary != nil:
				vals = append(vals, float64(m.GetSummary().GetSampleCount()))
			}
		}
		out[name] = vals
	}
	return out, nil
}

// checkMirrorDest dials the evaluation cluster's NameNode (or the SOCKS proxy in front of it)
// when checkpoint mirroring is configured: unreachable, the mirror queues and retries.
func (d *doctor) checkMirrorDest(ctx context.Context) {
	if !d.nnEnabled || len(d.conf.List("newtricks.mirror.rules")) == 0 {
		return
	}
	key, addr := "newtricks.mirror.dest.namenode", d.conf.Get("newtricks.mirror.dest.namenode", "")
	if p := d.conf.Get("newtricks.mirror.dest.socks-proxy", ""); p != "" {
		key, addr = "newtricks.mirror.dest.socks-proxy", p
	}
	if addr == "" {
		return // reported by namenode.ext-config
	}
	var dialer net.Dialer
	dctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	conn, err := dialer.DialContext(dctx, "tcp", addr)
	if err != nil {
		d.r.warn("mirror.dest", key, "%s=%s does not accept connections from this host: %v (checkpoints queue until it does)", key, addr, err)
		return
	}
	conn.Close()
	d.r.pass("mirror.dest", key, "%s=%s accepts connections", key, addr)
}

// dataNodeHere reports whether one of the live DataNodes listens on an address of this host.
func dataNodeHere[T any](live map[string]T) bool {
	local := map[string]bool{}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				local[ipn.IP.String()] = true
			}
		}
	}
	for name := range live {
		host, _, err := net.SplitHostPort(name)
		if err != nil {
			continue
		}
		if ip := net.ParseIP(host); ip != nil && (ip.IsLoopback() || local[ip.String()]) {
			return true
		}
		if ips, err := net.LookupIP(host); err == nil {
			for _, ip := range ips {
				if ip.IsLoopback() || local[ip.String()] {
					return true
				}
			}
		}
	}
	return false
}

// statusErr explains a non-200 answer of a daemon's web endpoint.
func statusErr(req *http.Request, resp *http.Response) error {
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusUnauthorized:
		return fmt.Errorf("GET %s: %s: the endpoint wants SPNEGO (hadoop.http.authentication.type=kerberos), which doctor does not speak; "+
			"list %s in hadoop.http.authentication.kerberos.endpoint.whitelist for the admin network, or run doctor --offline",
			req.URL, resp.Status, req.URL.Path)
	case http.StatusForbidden:
		return fmt.Errorf("GET %s: %s (hadoop.security.instrumentation.requires.admin?)", req.URL, resp.Status)
	}
	return fmt.Errorf("GET %s: %s", req.URL, resp.Status)
}
