package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/progress"
	"github.com/newtricks/newtricks/namenode-ext/hotspot"
	"github.com/newtricks/newtricks/namenode-ext/hotspot/hintclient"
)

func init() {
	register("hint", command{
		summary: "tell namenode-ext which files turn hot (create | status | extend | done | list)",
		run:     runHint,
	})
}

const hintUsage = `usage:
  newtricks hint create TARGET [--user U] --paths P[,P...] [PATH...] [--in 10s] [--for 10m]
                        --readers N [--replication R] [--dry-run] [--wait [--timeout 5m]] [--json]
  newtricks hint status TARGET [--user U] [--json] ID
  newtricks hint extend TARGET [--user U] --by 10m ID
  newtricks hint done   TARGET [--user U] [--cancel] ID
  newtricks hint list   TARGET [--user U] [--json]
  TARGET: --addr HOST:PORT[,HOST:PORT...] | --nameservice NS [--conf DIR]
  secure clusters, on any subcommand: --ca CA.pem and either
    --keytab K --principal P --spn newtricks/HOST [--krb5-conf F]   or   --token T
    (several addresses: each gets its own TLS server name, and --spn newtricks/_HOST its host)

A hint says that files (absolute paths, directories recursively, or globs) will be read by
--readers concurrent readers starting --in from now, for --for. namenode-ext raises their
replication factor in time (the plan says to what, and why a part was left out), and puts it
back after the window or on 'done'. --user is the HDFS user the hint is made for (default: the local user, or with Kerberos or a token the
authenticated user); it must be allowed to change the files.
'create --wait' shows the replicas placed so far on stderr (a bar on a terminal, plain lines
otherwise, JSON lines with --json); with --json --wait, stdout gets one object
{"plan": ..., "status": ...} once the hint is ready.
` + apiTargetUsage

type hintFlags struct {
	target apiTarget
	user   string
	json   bool
	auth   authn.ClientConfig
}

func newHintFlagSet(sub string, stderr io.Writer, hf *hintFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("newtricks hint "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, hintUsage) }
	def := ""
	if u, err := user.Current(); err == nil {
		def = u.Username
	}
	hf.target.register(fs)
	fs.StringVar(&hf.user, "user", def, "HDFS user the hint is made for")
	fs.BoolVar(&hf.json, "json", false, "print JSON")
	fs.StringVar(&hf.auth.CACert, "ca", "", "PEM CA certificate of the API's TLS certificate (secure clusters)")
	fs.StringVar(&hf.auth.Keytab, "keytab", "", "log in to Kerberos from this keytab (with --principal, --spn, --krb5-conf)")
	fs.StringVar(&hf.auth.Principal, "principal", "", "Kerberos principal to log in as, e.g. alice@EXAMPLE.COM")
	fs.StringVar(&hf.auth.CCache, "ccache", "", "use the Kerberos ticket cache (kinit's; e.g. $KRB5CCNAME) instead of a keytab (with --spn, --krb5-conf)")
	fs.StringVar(&hf.auth.SPN, "spn", "", "namenode-ext's service principal, e.g. newtricks/nn1.example.com")
	fs.StringVar(&hf.auth.Krb5Conf, "krb5-conf", "/etc/krb5.conf", "krb5.conf for the Kerberos login")
	fs.StringVar(&hf.auth.Token, "token", "", "HDFS delegation token (URL-safe string) instead of Kerberos")
	return fs
}

func runHint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("missing subcommand: create, status, extend, done or list")
	}
	sub, args := args[0], args[1:]
	if sub == "-h" || sub == "--help" || sub == "help" {
		fmt.Fprint(stdout, hintUsage)
		return nil
	}
	var hf hintFlags
	fs := newHintFlagSet(sub, stderr, &hf)
	var (
		paths              string
		in, dur, by, wait  time.Duration
		readers, repl      int
		dry, cancel, block bool
	)
	switch sub {
	case "create":
		fs.StringVar(&paths, "paths", "", "comma-separated paths (more may follow as arguments)")
		fs.DurationVar(&in, "in", 0, "the files turn hot this long from now")
		fs.DurationVar(&dur, "for", 10*time.Minute, "how long they stay hot")
		fs.IntVar(&readers, "readers", 0, "expected concurrent readers of every file (required)")
		fs.IntVar(&repl, "replication", 0, "explicit target factor (0: the planner chooses)")
		fs.BoolVar(&dry, "dry-run", false, "plan only, change nothing")
		fs.BoolVar(&block, "wait", false, "wait until the hint is ready")
		fs.DurationVar(&wait, "timeout", 5*time.Minute, "with --wait: give up after this long")
	case "extend":
		fs.DurationVar(&by, "by", 0, "move the end of the window this much later")
	case "done":
		fs.BoolVar(&cancel, "cancel", false, "record the hint as cancelled")
	case "status", "list":
	default:
		return usagef("unknown subcommand %q: want create, status, extend, done or list", sub)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usagef("%v", err)
	}
	addr, err := hf.target.resolve()
	if err != nil {
		return err
	}
	conn, logout, err := dialAPI(addr, hf.auth)
	if err != nil {
		return err
	}
	defer logout()
	defer conn.Close()
	if hf.auth.Authenticated() && !userSet(fs) {
		hf.user = "" // act as the authenticated identity, not the local user
	}
	c := hintclient.New(conn, hf.user)
	ctx, cancelCtx := context.WithTimeout(ctx, 2*time.Minute+wait)
	defer cancelCtx()

	id := func() (string, error) {
		if fs.NArg() != 1 {
			return "", usagef("want exactly one hint id, got %d arguments", fs.NArg())
		}
		return fs.Arg(0), nil
	}
	switch sub {
	case "create":
		var ps []string
		for _, p := range strings.Split(paths, ",") {
			if p = strings.TrimSpace(p); p != "" {
				ps = append(ps, p)
			}
		}
		ps = append(ps, fs.Args()...)
		if len(ps) == 0 {
			return usagef("no paths: use --paths or arguments")
		}
		plan, err := c.Create(ctx, hintclient.Hint{Paths: ps, In: in, For: dur, Readers: readers, Replication: repl, DryRun: dry})
		if err != nil {
			return err
		}
		if !block || dry {
			if hf.json {
				return printJSON(stdout, plan)
			}
			printPlan(stdout, plan)
			return nil
		}
		if !hf.json {
			printPlan(stdout, plan) // now: the admin reads it while waiting
		}
		rep := progress.New(stderr, progress.Options{JSON: hf.json})
		wctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		st, err := waitHint(wctx, rep, plan, func(ctx context.Context) (*hotspot.HintStatus, error) {
			return c.Status(ctx, plan.HintID)
		}, 500*time.Millisecond)
		rep.Close()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", plan.HintID, err)
		}
		if hf.json {
			return printJSON(stdout, struct {
				Plan   *hotspot.Plan       `json:"plan"`
				Status *hotspot.HintStatus `json:"status"`
			}{plan, st})
		}
		fmt.Fprintf(stdout, "ready after %s\n", st.ReadyAt.Sub(st.Created).Round(10*time.Millisecond))
		return nil
	case "status", "extend", "done":
		hid, err := id()
		if err != nil {
			return err
		}
		var st *hotspot.HintStatus
		switch sub {
		case "status":
			st, err = c.Status(ctx, hid)
		case "extend":
			if by <= 0 {
				return usagef("--by must be positive")
			}
			st, err = c.Extend(ctx, hid, by)
		case "done":
			if cancel {
				st, err = c.Cancel(ctx, hid)
			} else {
				st, err = c.Done(ctx, hid)
			}
		}
		if err != nil {
			return err
		}
		if hf.json {
			return printJSON(stdout, st)
		}
		printStatus(stdout, st)
		return nil
	case "list":
		l, problems, err := c.ListAll(ctx)
		if err != nil {
			return err
		}
		if hf.json {
			if len(problems) > 0 {
				return printJSON(stdout, struct {
					Hints    []*hotspot.HintStatus
					Problems []string
				}{l, problems})
			}
			return printJSON(stdout, l)
		}
		for _, p := range problems {
			fmt.Fprintf(stdout, "PROBLEM  %s\n", p)
		}
		for _, st := range l {
			ready := 0
			for _, f := range st.Files {
				if f.Ready {
					ready++
				}
			}
			fmt.Fprintf(stdout, "%s  %-9s user=%s files=%d ready=%d until=%s\n", st.ID, st.State, st.User,
				len(st.Files), ready, st.Deadline.UTC().Format(time.RFC3339))
		}
		return nil
	}
	return nil
}

// userSet reports whether --user was given on the command line.
func userSet(fs *flag.FlagSet) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "user" })
	return set
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printPlan(w io.Writer, p *hotspot.Plan) {
	id := p.HintID
	if id == "" {
		id = "(dry run)"
	}
	now := time.Now()
	fmt.Fprintf(w, "hint %s: %d files, %s to copy, ready in ~%s, hot %s .. %s\n", id, len(p.Files),
		humanBytes(p.BytesToCopy), p.EstimatedReady.Sub(now).Round(time.Second).String(),
		p.HotFrom.UTC().Format(time.TimeOnly), p.Deadline.UTC().Format(time.TimeOnly))
	fmt.Fprintf(w, "planner: live=%d load=%.2f cap=%d demand=%d\n", p.Load.Live, p.Factor.Load, p.Factor.Cap, p.Factor.Demand)
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tLENGTH\tFACTOR\tNOTE")
	for _, f := range p.Files {
		fmt.Fprintf(tw, "%s\t%s\t%d -> %d\t%s\n", f.Path, humanBytes(f.Length), f.Original, f.Target, f.Note)
	}
	tw.Flush()
	if len(p.Skipped) > 0 {
		fmt.Fprintf(w, "partial plan: %d left out\n", len(p.Skipped)+p.SkippedOmitted)
		for _, s := range p.Skipped {
			fmt.Fprintf(w, "  %-18s %s %s\n", s.Code, s.Path, s.Reason)
		}
		if p.SkippedOmitted > 0 {
			fmt.Fprintf(w, "  ... and %d more\n", p.SkippedOmitted)
		}
	}
}

func printStatus(w io.Writer, s *hotspot.HintStatus) {
	ready := "not ready"
	if s.Ready() {
		ready = "ready after " + s.ReadyAt.Sub(s.Created).Round(10*time.Millisecond).String()
	}
	fmt.Fprintf(w, "hint %s: %s, %s, user=%s implicit=%v until %s\n", s.ID, s.State, ready, s.User, s.Implicit,
		s.Deadline.UTC().Format(time.RFC3339))
	for _, n := range s.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tFACTOR\tPLACED\tREADY\tRESULT")
	for _, f := range s.Files {
		result := f.Result
		if f.Error != "" {
			result = strings.TrimSpace(result + " error: " + f.Error)
		}
		fmt.Fprintf(tw, "%s\t%d -> %d\t%d\t%v\t%s\n", f.Path, f.Original, f.Target, f.Placed, f.Ready, result)
	}
	tw.Flush()
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// waitHint polls status every poll until the hint is ready, showing the extra replicas placed
// out of those the plan asked for. It fails if the hint ends first or ctx expires.
func waitHint(ctx context.Context, rep *progress.Reporter, plan *hotspot.Plan, status func(context.Context) (*hotspot.HintStatus, error), poll time.Duration) (*hotspot.HintStatus, error) {
	var want int64
	for _, f := range plan.Files {
		want += int64(max(f.Target-f.Original, 0))
	}
	task := rep.Task("replicas placed", want, progress.Count)
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		st, err := status(ctx)
		if err != nil {
			task.Fail(err)
			return nil, err
		}
		var placed int64
		ready := 0
		for _, f := range st.Files {
			placed += int64(min(max(f.Placed-f.Original, 0), max(f.Target-f.Original, 0)))
			if f.Ready {
				ready++
			}
		}
		if st.Ready() {
			task.DoneAt(placed)
			return st, nil
		}
		switch st.State {
		case hotspot.StateFinished, hotspot.StateCancelled, hotspot.StateRestoring:
			err := fmt.Errorf("hint %s is %s: %w", st.ID, st.State, hotspot.ErrFinished)
			task.Fail(err)
			return st, err
		}
		task.Update(placed, fmt.Sprintf("%d of %d files ready (%s)", ready, len(st.Files), st.State))
		select {
		case <-ctx.Done():
			task.Fail(ctx.Err())
			return st, ctx.Err()
		case <-t.C:
		}
	}
}
