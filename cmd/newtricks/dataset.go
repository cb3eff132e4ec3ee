package main

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os/user"
	"path"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/dataset"
	"github.com/newtricks/newtricks/internal/progress"
)

func init() {
	register("dataset", command{
		summary: "index a dataset of tar shards / media files in HDFS for offload, show an index, read samples (index | show | read)",
		run:     runDataset,
	})
}

const datasetUsage = `usage:
  newtricks dataset index --namenode HOST:PORT [--user U] [--json] DIR
  newtricks dataset show  --namenode HOST:PORT [--user U] [--json] [--samples N] DIR
  Kerberized clusters, on index and show: --keytab K --principal P (or --ccache C)
    [--krb5-conf F] [--hdfs-spn hdfs/_HOST] [--data-transfer-protection authentication]

index reads every file of the HDFS directory DIR once (WebDataset-style *.tar shards whose
media members are <key>.jpg|png|webp|mp4|mkv|webm|mov|avi, and plain media files, one sample
each), probes every sample's geometry without decoding pixels, and writes the index beside the
shards as DIR/_newtricks_index.pb (through a temporary file and a rename). Progress goes to
stderr (a bar on a terminal, plain lines otherwise, JSON lines with --json). show prints an
index's summary and its first --samples samples. --namenode is the NameNode RPC address;
--user the HDFS user (default: the local user; with Kerberos the principal is the user). read prints what the reader returns for a
schedule (newtricks dataset read --help).
`

func runDataset(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, datasetUsage)
		return usagef("a subcommand is required: index or show")
	}
	sub := args[0]
	if sub == "read" {
		return runDatasetRead(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("newtricks dataset "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, datasetUsage) }
	def := ""
	if u, err := user.Current(); err == nil {
		def = u.Username
	}
	nn := fs.String("namenode", "", "NameNode RPC address host:port")
	usr := fs.String("user", def, "HDFS user")
	asJSON := fs.Bool("json", false, "print JSON")
	nSamples := fs.Int("samples", 10, "samples to list (show)")
	var da datasetAuth
	da.flags(fs, false)
	if err := fs.Parse(args[1:]); err != nil {
		return usagef("%v", err)
	}
	if *nn == "" || fs.NArg() != 1 {
		return usagef("--namenode and exactly one dataset directory are required")
	}
	dir := path.Clean(fs.Arg(0))
	if !path.IsAbs(dir) {
		return usagef("dataset directory %q must be an absolute HDFS path", dir)
	}
	c, release, err := da.hdfsClient(*nn, *usr)
	if err != nil {
		return err
	}
	defer release()
	defer c.Close()
	switch sub {
	case "index":
		return datasetIndex(ctx, c, dir, *asJSON, stdout, stderr)
	case "show":
		ix, err := dataset.Load(c, dir)
		if err != nil {
			return err
		}
		return datasetShow(ix, *nSamples, *asJSON, stdout)
	}
	return usagef("unknown subcommand %q: want index or show", sub)
}

func datasetIndex(ctx context.Context, c *hdfs.Client, dir string, asJSON bool, stdout, stderr io.Writer) error {
	rep := progress.New(stderr, progress.Options{JSON: asJSON})
	var task *progress.Task
	start := time.Now()
	m, err := dataset.Build(ctx, dataset.HDFSFS{Client: c}, dir, dataset.BuildOptions{
		Progress: func(files, totalFiles int, b, total int64) {
			if task == nil {
				task = rep.Task("indexing "+dir, total, progress.Bytes)
			}
			task.Set(b)
			task.Status(fmt.Sprintf("%d/%d files", files, totalFiles))
		},
	})
	if err != nil {
		if task != nil {
			task.Fail(err)
		}
		rep.Close()
		return err
	}
	if task != nil {
		task.Done()
	}
	rep.Close()
	sum, err := dataset.Store(ctx, c, m)
	if err != nil {
		return err
	}
	var bytes int64
	for _, f := range m.GetFiles() {
		bytes += f.GetLength()
	}
	if asJSON {
		return printJSON(stdout, map[string]any{"index": path.Join(dir, dataset.IndexName), "sha256": hex.EncodeToString(sum),
			"files": len(m.GetFiles()), "samples": len(m.GetSamples()), "bytes": bytes, "seconds": time.Since(start).Seconds()})
	}
	fmt.Fprintf(stdout, "indexed %d samples in %d files (%s) in %v\nwrote %s (sha256 %x)\n", len(m.GetSamples()), len(m.GetFiles()),
		humanBytes(bytes), time.Since(start).Round(time.Millisecond), path.Join(dir, dataset.IndexName), sum)
	return nil
}

func datasetShow(ix *dataset.Index, n int, asJSON bool, stdout io.Writer) error {
	media := map[string]int{}
	var cost int64
	for i := 0; i < ix.Len(); i++ {
		s := ix.Sample(i)
		media[s.GetMedia().String()]++
		cost += s.GetCost()
	}
	if asJSON {
		var ss []map[string]any
		for i := 0; i < min(n, ix.Len()); i++ {
			s := ix.Sample(i)
			ss = append(ss, map[string]any{"key": s.GetKey(), "file": ix.Files()[s.GetFile()].GetPath(), "offset": s.GetOffset(),
				"length": s.GetLength(), "media": s.GetMedia().String(), "width": s.GetWidth(), "height": s.GetHeight(), "frames": s.GetFrames(), "cost": s.GetCost(),
				"members": ix.MemberNames(i)})
		}
		return printJSON(stdout, map[string]any{"root": ix.Root(), "version": ix.Version(), "sha256": hex.EncodeToString(ix.SHA256()), "files": len(ix.Files()),
			"samples": ix.Len(), "media": media, "total_cost": cost, "first": ss})
	}
	fmt.Fprintf(stdout, "dataset %s\n  index sha256 %x (format %d)\n  %d samples in %d files, media %v, total cost %d\n", ix.Root(), ix.SHA256(), ix.Version(), ix.Len(), len(ix.Files()), media, cost)
	if ix.Version() < 2 {
		fmt.Fprintln(stdout, "  format 1: samples carry no members (labels, captions); rebuild the index to index them")
	}
	for i := 0; i < min(n, ix.Len()); i++ {
		s := ix.Sample(i)
		fmt.Fprintf(stdout, "  %-28s %-22s @%-10d %8d B  %-22s %dx%dx%d %v\n", s.GetKey(), ix.Files()[s.GetFile()].GetPath(), s.GetOffset(),
			s.GetLength(), s.GetMedia().String(), s.GetWidth(), s.GetHeight(), s.GetFrames(), ix.MemberNames(i))
	}
	return nil
}
