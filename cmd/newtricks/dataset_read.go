package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"github.com/newtricks/newtricks/internal/apiclient"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/reader"
	"github.com/newtricks/newtricks/schedule"
	"github.com/newtricks/newtricks/xformgraph/frame"
)

const datasetReadUsage = `usage:
  newtricks dataset read (--namenode HOST:PORT --namenode-ext HOST:PORT | --nameservice NS [--conf DIR])
                         --schedule FILE [--user U] [--rank R] [--steps N] [--start-step S] [--offload=false] [--raw-only]
  Kerberized clusters: --ca CA.pem --keytab K --principal P (or --ccache C) [--krb5-conf F]
    [--spn newtricks/_HOST] [--node-spn S] [--hdfs-spn hdfs/_HOST] [--data-transfer-protection P]

read runs the Go reader (the one trainers use) over a schedule (FILE: its JSON) for one rank
and prints every sample of its first N steps (all, with 0) as one JSON line: step, slot, key,
epoch, path (offload, raw, local), error, each graph output's name, member, dtype, shape and
SHA-256, and every non-media member raw (base64) and decoded by the WebDataset rules. With
credentials the reader proves them on every connection (reader.Auth, as a trainer's).
--namenode and --namenode-ext take an HA pair's addresses comma-separated or repeated; or
--nameservice NS [--conf DIR] (default $HADOOP_CONF_DIR) reads both from hdfs-site.xml.
`

// readLine is one sample as "dataset read" prints it.
type readLine struct {
	Step    uint64         `json:"step"`
	Slot    int            `json:"slot"`
	Key     string         `json:"key"`
	Epoch   uint64         `json:"epoch"`
	Path    string         `json:"path"`
	Error   string         `json:"error,omitempty"`
	Outputs []readOutput   `json:"outputs,omitempty"`
	Members []readMember   `json:"members,omitempty"`
	Meta    map[string]any `json:"meta,omitempty"`
}

type readOutput struct {
	Name   string `json:"name"`
	Member string `json:"member"`
	DType  uint8  `json:"dtype"`
	Shape  []int  `json:"shape"`
	SHA256 string `json:"sha256"`
}

type readMember struct {
	Name string `json:"name"`
	Data []byte `json:"data"` // base64 in JSON
}

func runDatasetRead(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("newtricks dataset read", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, datasetReadUsage) }
	def := ""
	if u, err := user.Current(); err == nil {
		def = u.Username
	}
	var nn, ext addrList
	var target apiTarget
	fs.Var(&nn, "namenode", "NameNode RPC address host:port (an HA pair: both)")
	fs.Var(&ext, "namenode-ext", "namenode-ext API address host:port (an HA pair: both)")
	fs.StringVar(&target.nameservice, "nameservice", "", "HDFS nameservice (from --conf's hdfs-site.xml) instead of --namenode and --namenode-ext")
	fs.StringVar(&target.conf, "conf", "", "Hadoop client conf dir for --nameservice (default $HADOOP_CONF_DIR)")
	usr := fs.String("user", def, "HDFS user")
	file := fs.String("schedule", "", "schedule JSON file")
	rank := fs.Int("rank", 0, "rank")
	steps := fs.Int("steps", 0, "steps to print (0: all)")
	start := fs.Uint64("start-step", 0, "first step")
	offload := fs.Bool("offload", true, "ask the DataNodes (false: read HDFS and transform here)")
	rawOnly := fs.Bool("raw-only", false, "ask the DataNodes for raw bytes only")
	var da datasetAuth
	da.flags(fs, true)
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	if (target.nameservice != "" || target.conf != "") && (len(nn) > 0 || len(ext) > 0) {
		return usagef("--nameservice/--conf or --namenode and --namenode-ext, not both")
	}
	if target.nameservice != "" || target.conf != "" {
		n, err := target.nameService()
		if err != nil {
			return err
		}
		nn, ext = n.RPCs(), n.APIs()
	}
	if len(nn) == 0 || len(ext) == 0 || *file == "" || fs.NArg() != 0 {
		return usagef("--namenode and --namenode-ext (or --nameservice) and --schedule are required, and nothing else")
	}
	b, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	spec, err := schedule.ParseJSON(b)
	if err != nil {
		return err
	}
	if *rank < 0 || *rank >= spec.WorldSize {
		return usagef("rank %d outside world size %d", *rank, spec.WorldSize)
	}
	var creds *reader.Credentials
	if da.kerberos() || da.a.CACert != "" {
		if creds, err = reader.NewCredentials(da.a); err != nil {
			return usagef("%v", err)
		}
		defer creds.Close()
		typed := false
		fs.Visit(func(f *flag.Flag) { typed = typed || f.Name == "user" })
		if da.kerberos() && !typed {
			*usr = "" // the authenticated caller; a typed --user is a proxy-user request
		}
	}
	cl, err := creds.HDFSClient(nn, *usr)
	if err != nil {
		return err
	}
	defer cl.Close()
	var ns *apiclient.Conn
	if creds != nil {
		ns, err = creds.DialNameNodeExt(ext...)
	} else {
		ns, err = apiclient.DialAll(ext)
	}
	if err != nil {
		return fmt.Errorf("namenode-ext %s: %w", ext.String(), err)
	}
	defer ns.Close()
	store := &reader.HDFSStore{Client: cl}
	defer store.Close()
	cfg := reader.Config{User: *usr, Auth: creds, Spec: spec, Rank: *rank, StartStep: *start, ForceRawOnly: *rawOnly, MaxWait: 30 * time.Second,
		Locator: reader.NamespaceLocator{Client: pb.NewNamespaceClient(ns), User: *usr}, Store: store}
	if *offload {
		cfg.Directory = reader.NamespaceDirectory{Client: pb.NewDataNodeDirectoryClient(ns), User: *usr}
	}
	r, err := reader.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer r.Close()
	enc := json.NewEncoder(stdout)
	for n := 0; *steps == 0 || n < *steps; n++ {
		st, err := r.Next(ctx)
		if errors.Is(err, reader.ErrEnd) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, s := range st.Samples {
			if err := enc.Encode(sampleLine(r, st.Step, s)); err != nil {
				return err
			}
		}
		st.Release()
	}
	return nil
}

func sampleLine(r *reader.Reader, step uint64, s reader.Sample) readLine {
	l := readLine{Step: step, Slot: s.Slot, Key: s.Key, Epoch: s.Epoch, Path: s.Path}
	if s.Err != nil {
		l.Error = s.Err.Error()
		return l
	}
	names, srcs := r.Outputs(s.Source), r.OutputSources(s.Source)
	for i, b := 0, s.Frames; len(b) > 0; i++ {
		f, rest, err := frame.Parse(b)
		if err != nil {
			l.Error = err.Error()
			return l
		}
		o := readOutput{DType: f.DType, Shape: f.Shape}
		if i < len(names) {
			o.Name, o.Member = names[i], srcs[i]
			if o.Member == "" {
				o.Member = s.Primary
			}
			if o.Member == "" {
				o.Member = "input" // a version 1 index names no members
			}
		}
		sum := sha256.Sum256(f.Payload)
		o.SHA256 = hex.EncodeToString(sum[:])
		l.Outputs = append(l.Outputs, o)
		b = rest
	}
	for _, m := range s.Members {
		l.Members = append(l.Members, readMember{Name: m.Name, Data: m.Data})
		v, err := reader.Decode(m.Name, m.Data)
		if err != nil {
			v = map[string]string{"error": err.Error()}
		}
		if l.Meta == nil {
			l.Meta = map[string]any{}
		}
		l.Meta[m.Name] = v
	}
	return l
}
