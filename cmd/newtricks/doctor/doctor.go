package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"
)

// Status of one finding.
type Status string

const (
	Pass Status = "pass"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Finding is the result of one check.
type Finding struct {
	// Check names what was checked, stable for scripts: "namenode.binary", "socket.dir", ...
	Check  string `json:"check"`
	Status Status `json:"status"`
	// Message says what was found and, when it is not a pass, what to do.
	Message string `json:"message"`
	// Key is the configuration key (or file) to change, when there is one.
	Key string `json:"key,omitempty"`
}

// Report is every finding of one run.
type Report struct {
	ConfDir  string    `json:"conf_dir"`
	Findings []Finding `json:"findings"`
	Pass     int       `json:"pass"`
	Warn     int       `json:"warn"`
	Fail     int       `json:"fail"`
}

// OK reports whether no check failed.
func (r *Report) OK() bool { return r.Fail == 0 }

func (r *Report) add(f Finding) {
	r.Findings = append(r.Findings, f)
	switch f.Status {
	case Pass:
		r.Pass++
	case Warn:
		r.Warn++
	case Fail:
		r.Fail++
	}
}

func (r *Report) pass(check, key, format string, a ...any) {
	r.add(Finding{check, Pass, fmt.Sprintf(format, a...), key})
}
func (r *Report) warn(check, key, format string, a ...any) {
	r.add(Finding{check, Warn, fmt.Sprintf(format, a...), key})
}
func (r *Report) fail(check, key, format string, a ...any) {
	r.add(Finding{check, Fail, fmt.Sprintf(format, a...), key})
}

// Find returns the findings of one check (tests, scripts).
func (r *Report) Find(check string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

// ErrBadInput: the conf dir cannot be read at all; no report is possible.
var ErrBadInput = errors.New("doctor: bad input")

// Options say what to check.
type Options struct {
	// ConfDir holds hdfs-site.xml (required) and core-site.xml (optional).
	ConfDir string
	// User is the user the daemons run as (owner of the socket dir). Default: the current user.
	User string
	// Classpath entries to search for the hooks jar (files, directories, or dir/* as in
	// Hadoop's classpath). Empty: $HADOOP_CLASSPATH and $HADOOP_HOME/share/hadoop/{common,hdfs}
	// and their lib/ directories.
	Classpath []string
	// Offline skips the running-cluster checks.
	Offline bool
	// Remote: this host is not the daemon's. The checks of files on the daemon's host (the
	// co-process binaries, the socket dir, the jar on the classpath) are skipped, and so are
	// metrics addresses on loopback (the daemon host's own) unless Metrics names them.
	Remote bool
	// NameNodeHTTP is the NameNode's web address (host:port). Empty: dfs.namenode.http-address.
	NameNodeHTTP string
	// Metrics are co-process /metrics addresses (host:port) to check besides the one in
	// newtricks.namenode.ext.metrics.address.
	Metrics []string
	// CAFiles are PEM certificates trusted, besides the system's, for HTTPS web endpoints
	// (HTTPS-only DataNodes or NameNode).
	CAFiles []string
	// Timeout bounds each network call and each binary probe. Default 10s.
	Timeout time.Duration
}

// Run checks everything Options ask for and returns the report. The error is non-nil only
// when nothing could be checked (unreadable conf dir).
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.ConfDir == "" {
		return nil, fmt.Errorf("%w: no conf dir (the directory holding hdfs-site.xml)", ErrBadInput)
	}
	conf, err := LoadConf(o.ConfDir)
	if err != nil {
		return nil, err
	}
	if o.User == "" {
		if u, err := user.Current(); err == nil {
			o.User = u.Username
		}
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	hc, err := httpClient(o)
	if err != nil {
		return nil, err
	}
	d := &doctor{o: o, conf: conf, r: &Report{ConfDir: o.ConfDir}, http: hc}
	d.r.pass("conf", "", "read %d keys from %s (core-site.xml, hdfs-site.xml)", conf.Len(), o.ConfDir)
	d.checkConfig(ctx)
	if !o.Offline {
		d.checkLive(ctx)
	}
	return d.r, nil
}

type doctor struct {
	o    Options
	conf *Conf
	r    *Report
	http *http.Client

	nnEnabled, dnEnabled bool
	// versions seen: the jar's and each binary's (for the skew check).
	jarVersion string
	binVersion map[string]string
}

// Print writes the report as aligned lines, in the order the checks ran, then a summary line.
func Print(w io.Writer, r *Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range r.Findings {
		msg := f.Message
		if f.Key != "" && f.Status != Pass {
			msg += " [" + f.Key + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", strings.ToUpper(string(f.Status)), f.Check, msg)
	}
	tw.Flush()
	verdict := "OK"
	if !r.OK() {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "%s: %d passed, %d warnings, %d failed\n", verdict, r.Pass, r.Warn, r.Fail)
}

// httpClient is the client of the daemons' web endpoints: the system's CAs plus CAFiles.
func httpClient(o Options) (*http.Client, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, f := range o.CAFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("%w: --ca: %v", ErrBadInput, err)
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%w: --ca %s: no PEM certificate in it", ErrBadInput, f)
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Timeout: o.Timeout, Transport: tr}, nil
}
