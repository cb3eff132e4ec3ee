package mirror

import (
	"fmt"
	"net"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/coproc"
)

// confPrefix starts every mirror key in hdfs-site.xml (the NameNode hook pushes every
// "newtricks.*" key).
const confPrefix = "newtricks.mirror."

// Completion modes: how a checkpoint shows it is complete on dc-a.
const (
	// CompleteMarker: a marker file (Rule.Marker, e.g. "_SUCCESS") is closed in the
	// checkpoint directory. The marker is mirrored with the checkpoint, inside the commit.
	CompleteMarker = "marker"
	// CompleteRename: the checkpoint is written under a temporary directory (Rule.Temp) and
	// renamed to its final name (Rule.Source).
	CompleteRename = "rename"
	// CompleteSignal: a Complete call (gRPC, `newtricks mirror complete`).
	CompleteSignal = "signal"
)

// Config is the mirror's configuration, built once from hdfs-site.xml keys; the key of each
// field is in its comment.
type Config struct {
	// Rules, in the order of newtricks.mirror.rules (comma-separated rule names). No rules:
	// the mirror is off.
	Rules []Rule
	// DestNameNode is dc-b's NameNode RPC address host:port (newtricks.mirror.dest.namenode;
	// required when there are rules).
	DestNameNode string
	// SourceNameNode is dc-a's NameNode RPC address (newtricks.mirror.source.namenode,
	// default dfs.namenode.rpc-address, else fs.defaultFS).
	SourceNameNode string
	// Authentication is the cluster's hadoop.security.authentication ("simple" when unset).
	Authentication string
	// Kerberos is set when Authentication is "kerberos": the mirror's HDFS clients then log in
	// as namenode-ext's own principal and name each checkpoint's owner as the effective user,
	// which both NameNodes authorize with hadoop.proxyuser.<the principal's short name>.*.
	Kerberos *KerberosConfig
	// DestHTTP is dc-b's NameNode HTTP address host:port (dfs.namenode.http-address there),
	// for WebHDFS SETTIMES: colinmarc/hdfs sets times to the second only
	// (newtricks.mirror.dest.http; empty: mtimes are preserved to the second).
	DestHTTP string
	// SocksProxy, if set, is a SOCKS5 proxy host:port every connection to dc-b goes through
	// (newtricks.mirror.dest.socks-proxy); the tests put the WAN emulator there.
	SocksProxy string
	// ProxyUser is the real user the mirror authenticates as on both clusters; it acts as
	// each checkpoint's owner through Hadoop's proxy-user rules
	// (hadoop.proxyuser.<user>.hosts/users|groups on both NameNodes), never as a superuser
	// (newtricks.mirror.proxy-user, default "newtricks").
	ProxyUser string
	// Bandwidth caps the bytes per second the mirror sends to dc-b, all transfers together;
	// 0 means no cap (newtricks.mirror.bandwidth, default 0).
	Bandwidth int64
	// Concurrency is how many file transfers are in flight at once
	// (newtricks.mirror.concurrency, default 128).
	Concurrency int
	// RangeSize: files of at least twice this size are copied as ranges of this size in
	// parallel and joined on dc-b with HDFS concat (needs DestHTTP); 0 disables. Rounded up to
	// a multiple of 64 KiB (newtricks.mirror.range-size, default 8 MiB).
	RangeSize int64
	// MaxFiles bounds the files of one checkpoint; a checkpoint with more fails
	// (newtricks.mirror.max-files, default 100000).
	MaxFiles int
	// MaxCheckpoints bounds the checkpoints tracked at once (open or copying); events of
	// further ones are dropped and counted (newtricks.mirror.max-checkpoints, default 64).
	MaxCheckpoints int
	// MaxCheckpointsPerUser bounds the checkpoints of one owner tracked at once; a further
	// one fails with the key in its status (newtricks.mirror.max-checkpoints.per-user,
	// default 16).
	MaxCheckpointsPerUser int
	// UrgentPerUser bounds one user's urgent marks: Urgent calls for checkpoints not seen
	// yet, and urgent checkpoints in flight it marked (an urgent checkpoint pauses every bulk
	// copy) (newtricks.mirror.urgent.per-user, default 8).
	UrgentPerUser int
	// UrgentMaxPending bounds the Urgent calls for checkpoints not seen yet, all users
	// together (newtricks.mirror.urgent.max-pending, default 256).
	UrgentMaxPending int
	// UrgentPendingTTL: an Urgent for a checkpoint not seen yet is forgotten after this long
	// (newtricks.mirror.urgent.pending-ttl, default 1h).
	UrgentPendingTTL time.Duration
	// MaxWaits and MaxWaitsPerUser bound the open Wait streams, in total and per user
	// (newtricks.mirror.max-waits, default 1024; newtricks.mirror.max-waits.per-user, 64).
	MaxWaits, MaxWaitsPerUser int
	// AllowSuperuser mirrors checkpoints owned by dc-a's HDFS superuser, acting as the
	// superuser on dc-b; refused by default (newtricks.mirror.allow-superuser, false).
	AllowSuperuser bool
	// DestHTTPCA is a PEM file of the CAs dc-b's WebHDFS certificate is checked against
	// (newtricks.mirror.dest.http.tls.ca; default the system's). With Kerberos the mirror
	// speaks HTTPS to DestHTTP (dc-b's dfs.namenode.https-address): SPNEGO and doas never
	// cross the WAN in plain text.
	DestHTTPCA string
	// JournalDir is the dc-a directory holding the journal, written as dc-a's superuser
	// (newtricks.mirror.journal.dir, default "/system/newtricks/mirror").
	JournalDir string
	// StagingDir is the dc-b directory where checkpoints are assembled before the commit
	// rename; it must exist with mode 1777 (sticky, like /tmp) or be writable by every owner
	// (newtricks.mirror.staging.dir, default "/tmp/newtricks-mirror").
	StagingDir string
	// Manifest is the name of the manifest file written into every committed checkpoint
	// directory on dc-b (newtricks.mirror.manifest, default ".newtricks-mirror.json").
	Manifest string
	// VerifyDest also compares dc-b's file checksum with dc-a's after each copy (two more
	// round trips per file); by default the checksum computed while streaming is compared
	// with dc-a's (newtricks.mirror.verify-dest, default false).
	VerifyDest bool
	// RetryInterval is the first wait before retrying a failed transfer; it doubles up to
	// 30s (newtricks.mirror.retry.interval, default 1s).
	RetryInterval time.Duration
	// MaxAttempts is how many times one file is tried against errors that are not the
	// destination being unreachable (which is retried forever) before its checkpoint fails
	// (newtricks.mirror.retry.max-attempts, default 5).
	MaxAttempts int
	// JournalFlush is how long verified files wait to be journaled together
	// (newtricks.mirror.journal.flush, default 200ms).
	JournalFlush time.Duration
	// KeepFinished is how many committed or failed checkpoints Status still lists
	// (newtricks.mirror.keep-finished, default 256).
	KeepFinished int
	// CleanupDelay is how long after a commit its housekeeping waits: removing the
	// committed checkpoint's journal segments on dc-a and retention of the job's older
	// mirrors on dc-b. Evaluators start reading the moment a checkpoint commits; deletes on
	// the NameNodes and block invalidation on the DataNodes would compete with them
	// (newtricks.mirror.cleanup.delay, default 30s; 0 runs it right after the commit).
	CleanupDelay time.Duration
}

// Rule says which dc-a paths are checkpoints and where they go.
type Rule struct {
	// Name is the rule's name in newtricks.mirror.rules.
	Name string
	// Source is the checkpoint directory pattern on dc-a, with the placeholders {job} and
	// {step} (a decimal number), e.g. "/ckpt/{job}/step_{step}"
	// (newtricks.mirror.rule.<name>.source, required).
	Source string
	// Completion is "marker", "rename" or "signal" (newtricks.mirror.rule.<name>.completion,
	// default "marker").
	Completion string
	// Marker is the file whose close completes a checkpoint (completion "marker";
	// newtricks.mirror.rule.<name>.marker, default "_SUCCESS").
	Marker string
	// Temp is the temporary directory pattern renamed to Source on completion, with the same
	// placeholders (completion "rename"; newtricks.mirror.rule.<name>.temp, e.g.
	// "/ckpt/{job}/step_{step}.tmp").
	Temp string
	// Dest is the directory pattern on dc-b (newtricks.mirror.rule.<name>.dest, default
	// Source).
	Dest string
	// Retain keeps the newest Retain committed checkpoints of a job on dc-b and deletes
	// older ones, only after a newer one is committed; 0 keeps all
	// (newtricks.mirror.rule.<name>.retain, default 0).
	Retain int

	source, temp *pattern
}

// DefaultConfig returns the values used for unset keys.
func DefaultConfig() Config {
	return Config{
		ProxyUser:             "newtricks",
		Concurrency:           128,
		RangeSize:             8 << 20,
		MaxFiles:              100000,
		MaxCheckpoints:        64,
		MaxCheckpointsPerUser: 16,
		UrgentPerUser:         8,
		UrgentMaxPending:      256,
		UrgentPendingTTL:      time.Hour,
		MaxWaits:              1024,
		MaxWaitsPerUser:       64,
		JournalDir:            "/system/newtricks/mirror",
		StagingDir:            "/tmp/newtricks-mirror",
		Manifest:              ".newtricks-mirror.json",
		RetryInterval:         time.Second,
		MaxAttempts:           5,
		JournalFlush:          200 * time.Millisecond,
		KeepFinished:          256,
		CleanupDelay:          30 * time.Second,
	}
}

// ConfigFromMap builds the Config from the pushed keys. Every error names its key.
func ConfigFromMap(conf map[string]string) (Config, error) {
	c := coproc.Conf(conf)
	cfg := DefaultConfig()
	var errs []error
	intKey := func(dst *int, key string) {
		v, err := c.Int(confPrefix+key, int64(*dst))
		if err != nil {
			errs = append(errs, err)
			return
		}
		*dst = int(v)
	}
	bw, err := c.Int(confPrefix+"bandwidth", 0)
	if err != nil {
		errs = append(errs, err)
	}
	cfg.Bandwidth = bw
	rs, err := c.Int(confPrefix+"range-size", cfg.RangeSize)
	if err != nil {
		errs = append(errs, err)
	}
	cfg.RangeSize = (rs + 65535) / 65536 * 65536
	intKey(&cfg.Concurrency, "concurrency")
	intKey(&cfg.MaxFiles, "max-files")
	intKey(&cfg.MaxCheckpoints, "max-checkpoints")
	intKey(&cfg.MaxCheckpointsPerUser, "max-checkpoints.per-user")
	intKey(&cfg.UrgentPerUser, "urgent.per-user")
	intKey(&cfg.UrgentMaxPending, "urgent.max-pending")
	intKey(&cfg.MaxWaits, "max-waits")
	intKey(&cfg.MaxWaitsPerUser, "max-waits.per-user")
	intKey(&cfg.MaxAttempts, "retry.max-attempts")
	intKey(&cfg.KeepFinished, "keep-finished")
	for key, dst := range map[string]*time.Duration{"retry.interval": &cfg.RetryInterval, "journal.flush": &cfg.JournalFlush, "cleanup.delay": &cfg.CleanupDelay, "urgent.pending-ttl": &cfg.UrgentPendingTTL} {
		v, err := c.Duration(confPrefix+key, *dst)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*dst = v
	}
	if v, err := c.Bool(confPrefix+"allow-superuser", false); err != nil {
		errs = append(errs, err)
	} else {
		cfg.AllowSuperuser = v
	}
	cfg.DestHTTPCA = c.String(confPrefix+"dest.http.tls.ca", "")
	if v, err := c.Bool(confPrefix+"verify-dest", false); err != nil {
		errs = append(errs, err)
	} else {
		cfg.VerifyDest = v
	}
	cfg.DestNameNode = c.String(confPrefix+"dest.namenode", "")
	cfg.SocksProxy = c.String(confPrefix+"dest.socks-proxy", "")
	cfg.DestHTTP = c.String(confPrefix+"dest.http", "")
	cfg.ProxyUser = c.String(confPrefix+"proxy-user", cfg.ProxyUser)
	cfg.JournalDir = c.String(confPrefix+"journal.dir", cfg.JournalDir)
	cfg.StagingDir = c.String(confPrefix+"staging.dir", cfg.StagingDir)
	cfg.Manifest = c.String(confPrefix+"manifest", cfg.Manifest)
	src := c.String("dfs.namenode.rpc-address", "")
	if src == "" {
		src = strings.TrimPrefix(c.String("fs.defaultFS", ""), "hdfs://")
	}
	cfg.SourceNameNode = c.String(confPrefix+"source.namenode", src)
	cfg.Authentication = strings.ToLower(strings.TrimSpace(c.String("hadoop.security.authentication", "simple")))
	if cfg.Authentication == "kerberos" {
		krb5 := os.Getenv("KRB5_CONFIG")
		if krb5 == "" {
			krb5 = "/etc/krb5.conf"
		}
		k := &KerberosConfig{
			Keytab:                 c.String("newtricks.namenode.ext.kerberos.keytab", ""),
			Principal:              c.String("newtricks.namenode.ext.kerberos.principal", ""),
			Krb5Conf:               c.String(confPrefix+"kerberos.krb5-conf", krb5),
			SourceSPN:              c.String(confPrefix+"source.kerberos.principal", ""),
			DataTransferProtection: c.String(confPrefix+"data-transfer-protection", "authentication"),
		}
		k.DestSPN = c.String(confPrefix+"dest.kerberos.principal", k.SourceSPN)
		httpHost := "localhost"
		if h, _, err := net.SplitHostPort(cfg.DestHTTP); err == nil && h != "" {
			httpHost = h
		}
		k.DestHTTPSPN = c.String(confPrefix+"dest.http.kerberos.principal", "HTTP/"+httpHost)
		if p, err := authn.ReplaceHost(k.Principal, ""); err == nil {
			k.Principal = p
		}
		cfg.Kerberos = k
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("mirror config: %w", errs[0])
	}

	for _, name := range strings.Split(c.String(confPrefix+"rules", ""), ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		r, err := ruleFromConf(c, name)
		if err != nil {
			return Config{}, err
		}
		cfg.Rules = append(cfg.Rules, r)
	}
	return cfg, cfg.Validate()
}

func ruleFromConf(c coproc.Conf, name string) (Rule, error) {
	k := func(s string) string { return confPrefix + "rule." + name + "." + s }
	r := Rule{
		Name:       name,
		Source:     c.String(k("source"), ""),
		Completion: c.String(k("completion"), CompleteMarker),
		Marker:     c.String(k("marker"), "_SUCCESS"),
		Temp:       c.String(k("temp"), ""),
	}
	r.Dest = c.String(k("dest"), r.Source)
	retain, err := c.Int(k("retain"), 0)
	if err != nil {
		return Rule{}, fmt.Errorf("mirror config: %w", err)
	}
	r.Retain = int(retain)
	return r, nil
}

// KerberosConfig is how the mirror authenticates to both clusters on a Kerberized cluster.
type KerberosConfig struct {
	// Keytab and Principal are namenode-ext's own (newtricks.namenode.ext.kerberos.keytab,
	// .principal; _HOST is this host's name).
	Keytab, Principal string
	// Krb5Conf locates the KDC (newtricks.mirror.kerberos.krb5-conf, default $KRB5_CONFIG,
	// else /etc/krb5.conf).
	Krb5Conf string
	// SourceSPN and DestSPN are the NameNodes' service principals
	// (newtricks.mirror.source.kerberos.principal, required; newtricks.mirror.dest.kerberos.principal,
	// default the source's); _HOST becomes each NameNode's host.
	SourceSPN, DestSPN string
	// DestHTTPSPN is dc-b's WebHDFS (SPNEGO) principal (newtricks.mirror.dest.http.kerberos.principal,
	// default HTTP/<host of dest.http>).
	DestHTTPSPN string
	// DataTransferProtection is dfs.data.transfer.protection of the DataNodes
	// (newtricks.mirror.data-transfer-protection: authentication, integrity or privacy;
	// default authentication).
	DataTransferProtection string
}

// Validate reports the first bad value, naming its key.
func (c *Config) Validate() error {
	bad := func(key, format string, a ...any) error {
		return fmt.Errorf("mirror config: %w: %s%s: %s", coproc.ErrBadConfig, confPrefix, key, fmt.Sprintf(format, a...))
	}
	if len(c.Rules) == 0 {
		return nil
	}
	k := c.Kerberos
	switch {
	case c.Authentication != "" && c.Authentication != "simple" && c.Authentication != "kerberos":
		return bad("rules", "the checkpoint mirror supports hadoop.security.authentication simple or kerberos, not %s", c.Authentication)
	case c.Authentication == "kerberos" && k == nil:
		return bad("rules", "kerberos authentication without the mirror's Kerberos settings")
	case k != nil && (k.Keytab == "" || k.Principal == ""):
		// Never run as anyone but the owner: without its own login it could not name one.
		return fmt.Errorf("mirror config: %w: newtricks.namenode.ext.kerberos.keytab and .principal: required for the mirror on a Kerberized cluster (it logs in as namenode-ext's principal and acts as each checkpoint's owner through hadoop.proxyuser.*)", coproc.ErrBadConfig)
	case k != nil && k.SourceSPN == "":
		return bad("source.kerberos.principal", "required on a Kerberized cluster: dc-a NameNode's principal (dfs.namenode.kerberos.principal there), e.g. hdfs/_HOST@EXAMPLE.COM")
	case k != nil && k.DataTransferProtection != "authentication" && k.DataTransferProtection != "integrity" && k.DataTransferProtection != "privacy":
		return bad("data-transfer-protection", "%q: authentication, integrity or privacy", k.DataTransferProtection)
	case c.DestNameNode == "":
		return bad("dest.namenode", "required when rules are set")
	case !isHostPort(c.DestNameNode):
		return bad("dest.namenode", "%q is not host:port", c.DestNameNode)
	case c.SourceNameNode == "" || !isHostPort(c.SourceNameNode):
		return bad("source.namenode", "%q is not host:port (nor is dfs.namenode.rpc-address)", c.SourceNameNode)
	case c.DestHTTP != "" && !isHostPort(c.DestHTTP):
		return bad("dest.http", "%q is not host:port", c.DestHTTP)
	case c.SocksProxy != "" && !isHostPort(c.SocksProxy):
		return bad("dest.socks-proxy", "%q is not host:port", c.SocksProxy)
	case c.ProxyUser == "" || strings.ContainsAny(c.ProxyUser, "/@ "):
		return bad("proxy-user", "%q is not a short user name", c.ProxyUser)
	case c.Bandwidth < 0:
		return bad("bandwidth", "%d < 0", c.Bandwidth)
	case c.RangeSize < 0:
		return bad("range-size", "%d < 0", c.RangeSize)
	case c.Concurrency < 1 || c.Concurrency > 4096:
		return bad("concurrency", "%d outside [1, 4096]", c.Concurrency)
	case c.MaxFiles < 1:
		return bad("max-files", "%d < 1", c.MaxFiles)
	case c.MaxCheckpoints < 1:
		return bad("max-checkpoints", "%d < 1", c.MaxCheckpoints)
	case c.MaxCheckpointsPerUser < 1:
		return bad("max-checkpoints.per-user", "%d < 1", c.MaxCheckpointsPerUser)
	case c.UrgentPerUser < 0:
		return bad("urgent.per-user", "%d < 0", c.UrgentPerUser)
	case c.UrgentMaxPending < 0:
		return bad("urgent.max-pending", "%d < 0", c.UrgentMaxPending)
	case c.UrgentPendingTTL <= 0:
		return bad("urgent.pending-ttl", "%v <= 0", c.UrgentPendingTTL)
	case c.MaxWaits < 1 || c.MaxWaitsPerUser < 1:
		return bad("max-waits", "max-waits %d and max-waits.per-user %d must be >= 1", c.MaxWaits, c.MaxWaitsPerUser)
	case !cleanAbs(c.JournalDir) || c.JournalDir == "/":
		return bad("journal.dir", "%q is not a clean absolute path below /", c.JournalDir)
	case !cleanAbs(c.StagingDir) || c.StagingDir == "/":
		return bad("staging.dir", "%q is not a clean absolute path below /", c.StagingDir)
	case c.Manifest == "" || strings.Contains(c.Manifest, "/"):
		return bad("manifest", "%q is not a file name", c.Manifest)
	case c.RetryInterval < 10*time.Millisecond:
		return bad("retry.interval", "%v < 10ms", c.RetryInterval)
	case c.MaxAttempts < 1:
		return bad("retry.max-attempts", "%d < 1", c.MaxAttempts)
	case c.JournalFlush < 0 || c.JournalFlush > time.Minute:
		return bad("journal.flush", "%v outside [0, 1m]", c.JournalFlush)
	case c.KeepFinished < 0:
		return bad("keep-finished", "%d < 0", c.KeepFinished)
	case c.CleanupDelay < 0 || c.CleanupDelay > time.Hour:
		return bad("cleanup.delay", "%v outside [0, 1h]", c.CleanupDelay)
	}
	seen := map[string]bool{}
	for i := range c.Rules {
		r := &c.Rules[i]
		key := func(s string) string { return "rule." + r.Name + "." + s }
		if !regexp.MustCompile(`^[A-Za-z0-9_-]+$`).MatchString(r.Name) {
			return bad("rules", "rule name %q: want letters, digits, '_' or '-'", r.Name)
		}
		if seen[r.Name] {
			return bad("rules", "rule %q listed twice", r.Name)
		}
		seen[r.Name] = true
		var err error
		if r.Source == "" {
			return bad(key("source"), "required")
		}
		if r.source, err = compilePattern(r.Source, true); err != nil {
			return bad(key("source"), "%q: %v", r.Source, err)
		}
		if _, err := compilePattern(r.Dest, false); err != nil {
			return bad(key("dest"), "%q: %v", r.Dest, err)
		}
		if !strings.Contains(r.Dest, "{step}") {
			return bad(key("dest"), "%q: must contain {step} so checkpoints do not collide", r.Dest)
		}
		if r.Retain < 0 {
			return bad(key("retain"), "%d < 0", r.Retain)
		}
		switch r.Completion {
		case CompleteMarker:
			if r.Marker == "" || strings.Contains(r.Marker, "/") || r.Marker == c.Manifest {
				return bad(key("marker"), "%q is not a file name (or clashes with the manifest)", r.Marker)
			}
		case CompleteRename:
			if r.Temp == "" {
				return bad(key("temp"), "required with completion \"rename\"")
			}
			if r.temp, err = compilePattern(r.Temp, true); err != nil {
				return bad(key("temp"), "%q: %v", r.Temp, err)
			}
			if r.temp.depth != r.source.depth {
				return bad(key("temp"), "%q must have as many components as source %q", r.Temp, r.Source)
			}
		case CompleteSignal:
		default:
			return bad(key("completion"), "%q: want marker, rename or signal", r.Completion)
		}
		for _, o := range c.Rules[:i] {
			if o.source.re.String() == r.source.re.String() {
				return bad(key("source"), "same pattern as rule %q", o.Name)
			}
		}
	}
	return nil
}

func cleanAbs(p string) bool { return strings.HasPrefix(p, "/") && path.Clean(p) == p }

func isHostPort(s string) bool {
	h, p, err := splitHostPort(s)
	return err == nil && h != "" && p > 0
}

func splitHostPort(s string) (string, int, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, fmt.Errorf("no port")
	}
	p, err := strconv.Atoi(s[i+1:])
	if err != nil || p > 65535 {
		return "", 0, fmt.Errorf("bad port")
	}
	return s[:i], p, nil
}

// pattern is a compiled path template with {job} and {step}.
type pattern struct {
	tmpl  string
	re    *regexp.Regexp // matches a path at or below an instance; groups: dir, job, step
	depth int            // path components of an instance
	jobI  int            // submatch index of job (0 if absent)
	stepI int
}

var placeholderRE = regexp.MustCompile(`\{[^}]*\}`)

func compilePattern(tmpl string, needBoth bool) (*pattern, error) {
	if !cleanAbs(tmpl) || tmpl == "/" {
		return nil, fmt.Errorf("not a clean absolute path below /")
	}
	p := &pattern{tmpl: tmpl, depth: strings.Count(tmpl, "/")}
	var b strings.Builder
	b.WriteString("^(")
	last, group := 0, 2
	counts := map[string]int{}
	for _, loc := range placeholderRE.FindAllStringIndex(tmpl, -1) {
		b.WriteString(regexp.QuoteMeta(tmpl[last:loc[0]]))
		switch ph := tmpl[loc[0]:loc[1]]; ph {
		case "{job}":
			b.WriteString(`([^/]+)`)
			p.jobI = group
		case "{step}":
			b.WriteString(`([0-9]+)`)
			p.stepI = group
		default:
			return nil, fmt.Errorf("unknown placeholder %s (want {job} and {step})", ph)
		}
		counts[tmpl[loc[0]:loc[1]]]++
		group++
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(tmpl[last:]))
	b.WriteString(`)(/.*)?$`)
	if strings.ContainsAny(placeholderRE.ReplaceAllString(tmpl, ""), "{}*?[]") {
		return nil, fmt.Errorf("stray brace or glob character")
	}
	if counts["{job}"] > 1 || counts["{step}"] > 1 {
		return nil, fmt.Errorf("a placeholder appears twice")
	}
	if needBoth && (counts["{job}"] != 1 || counts["{step}"] != 1) {
		return nil, fmt.Errorf("must contain {job} and {step}")
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	p.re = re
	return p, nil
}

// instance is one match of a pattern.
type instance struct {
	dir     string // the instance directory
	job     string
	stepStr string // as written in the path ("000100")
	step    int64
	rel     string // the matched path below dir, "" for dir itself
}

// match reports the instance of a path at or below one.
func (p *pattern) match(pth string) (instance, bool) {
	m := p.re.FindStringSubmatch(pth)
	if m == nil {
		return instance{}, false
	}
	in := instance{dir: m[1], rel: strings.TrimPrefix(m[len(m)-1], "/")}
	if p.jobI > 0 {
		in.job = m[p.jobI]
	}
	if p.stepI > 0 {
		s, err := strconv.ParseInt(m[p.stepI], 10, 64)
		if err != nil {
			return instance{}, false
		}
		in.step, in.stepStr = s, m[p.stepI]
	}
	return in, true
}

// expand fills a template's placeholders.
func expand(tmpl, job, stepStr string) string {
	return strings.NewReplacer("{job}", job, "{step}", stepStr).Replace(tmpl)
}
