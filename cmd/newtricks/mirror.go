package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/user"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/newtricks/newtricks/internal/progress"
	"github.com/newtricks/newtricks/namenode-ext/mirror/mirrorclient"
)

func init() {
	register("mirror", command{
		summary: "checkpoint mirroring to the evaluation cluster (status | wait | urgent | complete)",
		run:     runMirror,
	})
}

const mirrorUsage = `usage:
  newtricks mirror status   TARGET [--user U] [--rule R] [--job J] [--json]
  newtricks mirror wait     TARGET [--user U] [--rule R] --job J --step N [--timeout 1h] [--json]
  newtricks mirror urgent   TARGET [--user U] [--rule R] --job J --step N [--json]
  newtricks mirror complete TARGET [--user U] [--rule R] --job J --step N [--json]

namenode-ext on the training cluster (dc-a) mirrors each checkpoint to the evaluation cluster
(dc-b) while it is being written. 'status' lists checkpoints (state, files, bytes, rate, ETA,
lag) and the link; 'wait' blocks with a progress bar until the checkpoint is committed on dc-b
(exit 1 if it failed); 'urgent' moves a checkpoint to the front (also before it is written);
'complete' signals completion for rules with completion "signal". TARGET is dc-a's
namenode-ext: --addr HOST:PORT[,HOST:PORT...] | --nameservice NS [--conf DIR]; --user is the
HDFS user (default: the local user). --rule may be left out when one rule is configured.
'wait' follows a failover: the stream is opened again on the new active's namenode-ext.
` + apiTargetUsage

func runMirror(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("missing subcommand: status, wait, urgent or complete")
	}
	sub, args := args[0], args[1:]
	if sub == "-h" || sub == "--help" || sub == "help" {
		fmt.Fprint(stdout, mirrorUsage)
		return nil
	}
	fs := flag.NewFlagSet("newtricks mirror "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, mirrorUsage) }
	def := ""
	if u, err := user.Current(); err == nil {
		def = u.Username
	}
	var (
		target         apiTarget
		usr, rule, job string
		step           int64
		asJSON         bool
		timeout        time.Duration
	)
	target.register(fs)
	fs.StringVar(&usr, "user", def, "HDFS user")
	fs.StringVar(&rule, "rule", "", "mirror rule name")
	fs.StringVar(&job, "job", "", "job")
	fs.Int64Var(&step, "step", -1, "step")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	fs.DurationVar(&timeout, "timeout", time.Hour, "give up waiting after this long (wait)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	addr, err := target.resolve()
	if err != nil {
		return err
	}
	if usr == "" {
		return usagef("--user is required")
	}
	ref := mirrorclient.Ref{Rule: rule, Job: job, Step: step}
	needRef := func() error {
		if job == "" || step < 0 {
			return usagef("--job and --step (>= 0) are required")
		}
		return nil
	}
	c, err := mirrorclient.Dial(addr, usr)
	if err != nil {
		return err
	}
	defer c.Close()
	switch sub {
	case "status":
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		st, err := c.Status(cctx, rule, job)
		if err != nil {
			return mirrorErr(err)
		}
		if asJSON {
			return printJSON(stdout, st)
		}
		printMirrorStatus(stdout, st)
		return nil
	case "urgent", "complete":
		if err := needRef(); err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var cp *mirrorclient.Checkpoint
		if sub == "urgent" {
			cp, err = c.Urgent(cctx, ref)
		} else {
			cp, err = c.Complete(cctx, ref)
		}
		if err != nil {
			return mirrorErr(err)
		}
		if asJSON {
			return printJSON(stdout, cp)
		}
		fmt.Fprintf(stdout, "%s/%d: %s%s\n", job, step, cp.State, map[bool]string{true: ", urgent"}[cp.Urgent])
		return nil
	case "wait":
		if err := needRef(); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		rep := progress.New(stderr, progress.Options{JSON: asJSON})
		task := rep.Task(fmt.Sprintf("mirror %s/%d", job, step), 0, progress.Bytes)
		began := time.Now()
		var cp *mirrorclient.Checkpoint
		// namenode-ext restarts (its journal resumes the mirror) are waited out.
		for {
			cp, err = c.Wait(wctx, ref, 500*time.Millisecond, func(cp *mirrorclient.Checkpoint) {
				task.SetTotal(cp.BytesTotal)
				eta := "ETA ?"
				if cp.ETA >= 0 && cp.State == mirrorclient.Copying {
					eta = "ETA " + time.Duration(cp.ETA).Round(100*time.Millisecond).String()
				}
				task.Update(cp.BytesDone, fmt.Sprintf("%s, %d/%d files, %s/s, %s", cp.State, cp.FilesDone, cp.FilesTotal,
					progress.HumanBytes(int64(cp.Rate)), eta))
			})
			if status.Code(err) == codes.Unavailable && wctx.Err() == nil {
				time.Sleep(500 * time.Millisecond)
				continue
			}
			break
		}
		if err != nil {
			task.Fail(err)
			rep.Close()
			if cp != nil && asJSON {
				printJSON(stdout, cp)
			}
			return mirrorErr(err)
		}
		task.DoneAt(cp.BytesDone)
		rep.Close()
		if asJSON {
			return printJSON(stdout, cp)
		}
		fmt.Fprintf(stdout, "%s/%d committed on dc-b at %s (%d files, %s; waited %s; lag after completion %s)\n",
			job, step, cp.DestPath, cp.FilesDone, progress.HumanBytes(cp.BytesDone),
			time.Since(began).Round(10*time.Millisecond), time.Duration(cp.Lag).Round(10*time.Millisecond))
		return nil
	default:
		return usagef("unknown subcommand %q: want status, wait, urgent or complete", sub)
	}
}

func mirrorErr(err error) error {
	if st, ok := status.FromError(err); ok {
		return fmt.Errorf("%s: %s", st.Code(), st.Message())
	}
	return err
}

func printMirrorStatus(w io.Writer, st *mirrorclient.Status) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tJOB\tSTEP\tSTATE\tFILES\tBYTES\tRATE\tETA\tLAG\tURGENT\tDEST\tERROR")
	for _, c := range st.Checkpoints {
		eta, lag := "-", "-"
		if c.ETA >= 0 && c.State == mirrorclient.Copying {
			eta = time.Duration(c.ETA).Round(100 * time.Millisecond).String()
		}
		if c.State == mirrorclient.Committed || c.State == mirrorclient.Retired {
			lag = time.Duration(c.Lag).Round(10 * time.Millisecond).String()
		}
		urgent := ""
		if c.Urgent {
			urgent = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d/%d\t%s/%s\t%s/s\t%s\t%s\t%s\t%s\t%s\n", c.Ref.Rule, c.Ref.Job, c.Ref.Step, c.State,
			c.FilesDone, c.FilesTotal, progress.HumanBytes(c.BytesDone), progress.HumanBytes(c.BytesTotal),
			progress.HumanBytes(int64(c.Rate)), eta, lag, urgent, c.DestPath, c.Error)
	}
	tw.Flush()
	l := st.Link
	util := "-"
	if l.BandwidthCap > 0 {
		util = fmt.Sprintf("%.0f%% of %s/s", 100*l.Utilization, progress.HumanBytes(l.BandwidthCap))
	}
	fmt.Fprintf(w, "link: %s/s (%s), %d files / %s in flight, %d files / %s mirrored, %d retries\n",
		progress.HumanBytes(int64(l.Rate)), util, l.FilesInFlight, progress.HumanBytes(l.BytesInFlight),
		l.FilesTotal, progress.HumanBytes(l.BytesTotal), l.Retries)
}
