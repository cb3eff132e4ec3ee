package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/internal/apiclient"
	"github.com/newtricks/newtricks/internal/authn"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

// The reader part of the C API wraps package reader (the Go implementation of the offload
// session protocol), so a Python trainer runs exactly the schedule, ownership and fallback
// logic of the Go reader instead of a second implementation of it.
//
//	uint64_t ntx_reader_open(const char *config_json, size_t len, char **err);
//	int ntx_reader_next(uint64_t reader, uint8_t **out, size_t *out_len, char **err);
//	    0 with one encoded step (see encodeStep), codeEnd after the last step, or an error.
//	char *ntx_reader_stats(uint64_t reader);   JSON; free with ntx_free. NULL for a bad handle.
//	char *ntx_reader_info(uint64_t reader);    JSON (infoJSON); free with ntx_free.
//	int ntx_reader_close(uint64_t reader);

// codeEnd: the schedule has no more steps.
const codeEnd = 11

// readerConfig is the JSON the caller passes to ntx_reader_open.
type readerConfig struct {
	// User is the HDFS user every call names.
	User string `json:"user"`
	// NameNode is the HDFS NameNode RPC address (host:port) for index and fallback reads; an
	// HA nameservice's NameNodes as a list or comma-separated (colinmarc/hdfs fails over).
	NameNode addrs `json:"namenode"`
	// NameNodeExt is namenode-ext's public API (host:port): block locations, and the
	// directory of datanode-ext endpoints the reader takes its nodes from (nodes that join or
	// leave are picked up between steps). Several (each NameNode's): apiclient.Failover.
	NameNodeExt addrs `json:"namenode_ext"`
	// Nameservice and ConfDir fill NameNode and NameNodeExt, where not given, from the
	// nameservice's NameNodes in ConfDir's hdfs-site.xml (default $HADOOP_CONF_DIR;
	// siteconf.NameService). Either set is enough (no nameservice: fs.defaultFS's).
	Nameservice string `json:"nameservice"`
	ConfDir     string `json:"conf_dir"`
	// DataNodes, if set, are datanode-ext API addresses to use instead of the directory's.
	DataNodes []string `json:"datanodes"`
	// Offload false reads everything from HDFS and transforms it here (default true).
	Offload *bool `json:"offload"`
	// Schedule is the JSON form of newtricks.v1.ScheduleSpec.
	Schedule     json.RawMessage `json:"schedule"`
	Rank         int             `json:"rank"`
	StartStep    uint64          `json:"start_step"`
	Prefetch     int             `json:"prefetch"`
	Lookahead    uint32          `json:"lookahead"`
	MaxWaitMs    int64           `json:"max_wait_ms"`
	LocalWorkers int             `json:"local_workers"`
	RetryMs      int64           `json:"retry_ms"`
	RawOnly      bool            `json:"raw_only"`
	// OpenTimeoutMs bounds Open (index loads, locations, sessions); default 60 s.
	OpenTimeoutMs int64 `json:"open_timeout_ms"`
	// Partial maps steps (decimal strings) to the slots of the global batch this reader reads
	// at that step instead of its rank's range (reader.Config.Partial: a resume).
	Partial map[string][]int `json:"partial"`
	// Auth, if set, is the reader's credentials (reader.Auth): namenode-ext, every
	// datanode-ext and HDFS are reached with them. user may then be empty (the
	// authenticated caller).
	Auth *readerAuth `json:"auth"`
}

// readerAuth is reader.Auth in JSON (newtricks.auth.Auth's config in Python).
type readerAuth struct {
	CA                     string `json:"ca"`
	Krb5Conf               string `json:"krb5_conf"`
	Keytab                 string `json:"keytab"`
	Principal              string `json:"principal"`
	CCache                 string `json:"ccache"`
	SPN                    string `json:"spn"`
	NodeSPN                string `json:"node_spn"`
	HDFSSPN                string `json:"hdfs_spn"`
	DataTransferProtection string `json:"data_transfer_protection"`
	Token                  string `json:"token"`
}

// credentials logs in with a (nil: none).
func (a *readerAuth) credentials() (*reader.Credentials, error) {
	if a == nil {
		return nil, nil
	}
	return reader.NewCredentials(reader.Auth{ClientConfig: authn.ClientConfig{CACert: a.CA, Krb5Conf: a.Krb5Conf, Keytab: a.Keytab,
		Principal: a.Principal, CCache: a.CCache, SPN: a.SPN, Token: a.Token}, NodeSPN: a.NodeSPN, HDFSSPN: a.HDFSSPN,
		DataTransferProtection: a.DataTransferProtection})
}

type openReader struct {
	r     *reader.Reader
	hdfs  *hdfs.Client
	store *reader.HDFSStore
	ns    *apiclient.Conn
	creds *reader.Credentials // nil without auth
	// sources is the schedule's number of sources.
	sources int
}

func (o *openReader) close() {
	o.r.Close()
	o.store.Close()
	o.hdfs.Close()
	o.ns.Close()
	o.creds.Close()
}

type readers struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]*openReader
}

var readerTable = &readers{m: map[uint64]*openReader{}}

func (t *readers) get(h uint64) (*openReader, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.m[h]
	if !ok {
		return nil, fmt.Errorf("reader %d: %w", h, errBadHandle)
	}
	return r, nil
}

func openReaderFromJSON(b []byte) (uint64, error) {
	var c readerConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return 0, fmt.Errorf("%w: reader config: %v", errBadArgument, err)
	}
	if err := c.resolveNameService(); err != nil {
		return 0, err
	}
	switch {
	case c.User == "" && (c.Auth == nil || c.Auth.Keytab == "" && c.Auth.CCache == "" && c.Auth.Token == ""):
		return 0, fmt.Errorf("%w: reader config: user is required (or auth with a credential)", errBadArgument)
	case len(c.NameNode) == 0:
		return 0, fmt.Errorf("%w: reader config: namenode (HDFS RPC host:port, or a list), or nameservice/conf_dir, is required", errBadArgument)
	case len(c.NameNodeExt) == 0:
		return 0, fmt.Errorf("%w: reader config: namenode_ext (namenode-ext API host:port, or a list), or nameservice/conf_dir, is required", errBadArgument)
	case len(c.Schedule) == 0:
		return 0, fmt.Errorf("%w: reader config: schedule is required", errBadArgument)
	}
	spec, err := schedule.ParseJSON(c.Schedule)
	if err != nil {
		return 0, err
	}
	if c.Rank < 0 || c.Rank >= spec.WorldSize {
		return 0, fmt.Errorf("%w: rank %d outside world size %d", errBadArgument, c.Rank, spec.WorldSize)
	}
	creds, err := c.Auth.credentials()
	if err != nil {
		return 0, fmt.Errorf("%w: reader config: auth: %v", errBadArgument, err)
	}
	cl, err := creds.HDFSClient(c.NameNode, c.User)
	if err != nil {
		creds.Close()
		return 0, err
	}
	var ns *apiclient.Conn
	if creds != nil {
		ns, err = creds.DialNameNodeExt(c.NameNodeExt...)
	} else {
		ns, err = apiclient.DialAll(c.NameNodeExt)
	}
	if err != nil {
		cl.Close()
		creds.Close()
		return 0, fmt.Errorf("namenode-ext %s: %w", strings.Join(c.NameNodeExt, ","), err)
	}
	store := &reader.HDFSStore{Client: cl}
	cfg := reader.Config{
		User: c.User, Spec: spec, Rank: c.Rank, StartStep: c.StartStep,
		Locator: reader.NamespaceLocator{Client: pb.NewNamespaceClient(ns), User: c.User}, Store: store,
		Prefetch: c.Prefetch, Lookahead: c.Lookahead, MaxWait: time.Duration(c.MaxWaitMs) * time.Millisecond,
		LocalWorkers: c.LocalWorkers, Retry: time.Duration(c.RetryMs) * time.Millisecond, ForceRawOnly: c.RawOnly, Auth: creds,
	}
	if c.Offload == nil || *c.Offload {
		if len(c.DataNodes) > 0 {
			cfg.Nodes = c.DataNodes
		} else {
			cfg.Directory = reader.NamespaceDirectory{Client: pb.NewDataNodeDirectoryClient(ns), User: c.User}
		}
	}
	if len(c.Partial) > 0 {
		cfg.Partial = make(map[uint64][]int, len(c.Partial))
		for k, v := range c.Partial {
			step, err := strconv.ParseUint(k, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%w: reader config: partial step %q is not a step number", errBadArgument, k)
			}
			cfg.Partial[step] = v
		}
	}
	to := time.Duration(c.OpenTimeoutMs) * time.Millisecond
	if to <= 0 {
		to = time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), to)
	defer cancel()
	r, err := reader.Open(ctx, cfg)
	if err != nil {
		store.Close()
		cl.Close()
		ns.Close()
		creds.Close()
		return 0, err
	}
	readerTable.mu.Lock()
	defer readerTable.mu.Unlock()
	readerTable.next++
	readerTable.m[readerTable.next] = &openReader{r: r, hdfs: cl, store: store, ns: ns, creds: creds, sources: len(spec.Sources)}
	return readerTable.next, nil
}

func closeReader(h uint64) error {
	readerTable.mu.Lock()
	o, ok := readerTable.m[h]
	delete(readerTable.m, h)
	readerTable.mu.Unlock()
	if !ok {
		return fmt.Errorf("reader %d: %w", h, errBadHandle)
	}
	o.close()
	return nil
}

// stepMeta describes one sample of an encoded step.
type stepMeta struct {
	Slot   int    `json:"slot"`
	Source int    `json:"source"`
	Key    string `json:"key"`
	Epoch  uint64 `json:"epoch"`
	Path   string `json:"path"`
	Error  string `json:"error,omitempty"`
	Domain string `json:"domain,omitempty"`
	// Primary names the sample's primary media member (reader.Sample.Primary).
	Primary string `json:"primary,omitempty"`
	// Row is the sample's row in every batched output (-1 for a failed sample); Off and Len
	// locate its frames when the step is not batched.
	Row int `json:"row"`
	Off int `json:"off"`
	Len int `json:"len"`
	// Members are the sample's non-media members (labels, captions, metadata), raw, in
	// index order, each at Off/Len of the data area.
	Members []memberMeta `json:"members,omitempty"`
}

// memberMeta locates one non-media member of a sample in the data area.
type memberMeta struct {
	Name string `json:"name"`
	Off  int    `json:"off"`
	Len  int    `json:"len"`
}

// batchMeta describes one graph output stacked over the step's good samples.
type batchMeta struct {
	DType  uint8 `json:"dtype"`
	Layout uint8 `json:"layout"`
	Shape  []int `json:"shape"` // of one sample
	Off    int   `json:"off"`
	Len    int   `json:"len"` // rows x one sample's payload
}

type stepHeader struct {
	Step    uint64      `json:"step"`
	Batched bool        `json:"batched"`
	Outputs []batchMeta `json:"outputs,omitempty"`
	Samples []stepMeta  `json:"samples"`
}

// encodeStep lays out a step for the caller: "NTST", uint32 reserved, uint64 step, uint64
// length H of a JSON header (stepHeader), the header, zero padding to a multiple of 8, then
// the data area. When every good sample has the same tensor outputs (count, dtype, layout,
// shape) the step is batched: output i of all good samples is one contiguous block
// ([rows, shape...], row order = slot order), so the caller gets a whole batch as one array
// without copying. Otherwise each sample's frames are stored as received (Off, Len). Then
// every good sample's non-media members (stepMeta.Members). Every block starts at a multiple
// of 8. alloc returns the output buffer (C memory).
func encodeStep(st *reader.Step, alloc func(n int) []byte) ([]byte, error) {
	h := stepHeader{Step: st.Step, Samples: make([]stepMeta, len(st.Samples))}
	parsed := make([][]*frame.Frame, len(st.Samples))
	rows := 0
	uniform := true
	var first []*frame.Frame
	for i, s := range st.Samples {
		m := stepMeta{Slot: s.Slot, Source: s.Source, Key: s.Key, Epoch: s.Epoch, Path: s.Path, Row: -1, Primary: s.Primary}
		if s.Err == nil {
			for b := s.Frames; len(b) > 0; {
				f, rest, err := frame.Parse(b)
				if err != nil {
					s.Err = fmt.Errorf("sample %q: output frames: %w", s.Key, err)
					parsed[i] = nil
					break
				}
				parsed[i] = append(parsed[i], f)
				b = rest
			}
		}
		if s.Err != nil {
			m.Error = s.Err.Error()
		} else {
			if len(parsed[i]) > 0 {
				m.Domain = parsed[i][0].Domain
			}
			if first == nil {
				first = parsed[i]
			} else if !sameOutputs(first, parsed[i]) {
				uniform = false
			}
			for _, f := range parsed[i] {
				if f.Kind != frame.KindTensor {
					uniform = false
				}
			}
			m.Row = rows
			rows++
		}
		h.Samples[i] = m
	}
	off := 0
	if uniform && rows > 0 && len(first) > 0 {
		h.Batched = true
		for _, f := range first {
			n := rows * len(f.Payload)
			h.Outputs = append(h.Outputs, batchMeta{DType: f.DType, Layout: f.Layout, Shape: f.Shape, Off: off, Len: n})
			off += (n + 7) &^ 7
		}
	} else {
		for i, s := range st.Samples {
			if h.Samples[i].Error != "" {
				continue
			}
			h.Samples[i].Off, h.Samples[i].Len = off, len(s.Frames)
			off += (len(s.Frames) + 7) &^ 7
		}
	}
	for i, s := range st.Samples {
		if h.Samples[i].Error != "" {
			continue
		}
		for _, m := range s.Members {
			h.Samples[i].Members = append(h.Samples[i].Members, memberMeta{Name: m.Name, Off: off, Len: len(m.Data)})
			off += (len(m.Data) + 7) &^ 7
		}
	}
	hdr, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	start := 24 + (len(hdr)+7)&^7
	buf := alloc(start + off)
	if buf == nil {
		return nil, errors.New("cannot allocate the step buffer")
	}
	// Only the header and the padding need zeroing: every data byte is written below.
	clear(buf[:start])
	copy(buf, "NTST")
	binary.LittleEndian.PutUint64(buf[8:], st.Step)
	binary.LittleEndian.PutUint64(buf[16:], uint64(len(hdr)))
	copy(buf[24:], hdr)
	data := buf[start:]
	pad := func(off, n int) { clear(data[off+n : off+(n+7)&^7]) }
	if h.Batched {
		for _, o := range h.Outputs {
			pad(o.Off, o.Len)
		}
		for i, fs := range parsed {
			r := h.Samples[i].Row
			if r < 0 {
				continue
			}
			for o, f := range fs {
				n := len(f.Payload)
				copy(data[h.Outputs[o].Off+r*n:], f.Payload)
			}
		}
	} else {
		for i, s := range st.Samples {
			if m := h.Samples[i]; m.Error == "" {
				copy(data[m.Off:], s.Frames)
				pad(m.Off, m.Len)
			}
		}
	}
	for i, s := range st.Samples {
		for j, mm := range h.Samples[i].Members {
			copy(data[mm.Off:], s.Members[j].Data)
			pad(mm.Off, mm.Len)
		}
	}
	return buf, nil
}

// sameOutputs reports whether two samples' outputs can be stacked.
func sameOutputs(a, b []*frame.Frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Kind != b[i].Kind || a[i].DType != b[i].DType || a[i].Layout != b[i].Layout || len(a[i].Shape) != len(b[i].Shape) {
			return false
		}
		for j := range a[i].Shape {
			if a[i].Shape[j] != b[i].Shape[j] {
				return false
			}
		}
	}
	return true
}

// statsJSON is the reader's totals for the caller.
func statsJSON(s reader.Stats) ([]byte, error) {
	w := append([]time.Duration(nil), s.Waits...)
	sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
	q := func(p float64) float64 {
		if len(w) == 0 {
			return 0
		}
		return w[int(p*float64(len(w)-1))].Seconds()
	}
	return json.Marshal(map[string]any{
		"steps": s.Steps, "offloaded": s.Offloaded, "raw": s.Raw, "local": s.Local, "errors": s.Errors,
		"offloaded_fraction": s.OffloadedFraction(), "bytes_from_nodes": s.BytesFromNodes,
		"bytes_from_hdfs": s.BytesFromHDFS, "wait_s": s.Wait.Seconds(), "wait_p50_s": q(0.5), "wait_p99_s": q(0.99),
		"wait_max_s": q(1), "local_transform_s": s.LocalTransform.Seconds(), "reconnects": s.Reconnects,
		"raw_only": s.RawOnly, "raw_only_reason": s.RawOnlyReason, "refused_tensors": s.RefusedTensors, "node_error": s.NodeError,
	})
}

// infoJSON describes the reader's sources for the caller: for each, its graph's output names
// and the member each output is made from ("" for the primary media member).
func infoJSON(o *openReader) ([]byte, error) {
	type src struct {
		Outputs []string `json:"outputs"`
		Sources []string `json:"sources"`
	}
	out := make([]src, o.sources)
	for i := range out {
		out[i] = src{Outputs: o.r.Outputs(i), Sources: o.r.OutputSources(i)}
	}
	return json.Marshal(map[string]any{"sources": out})
}
