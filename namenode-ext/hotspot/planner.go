package hotspot

import (
	"fmt"
	"math"
	"path"
	"sort"
	"time"
)

// Request is a hint as the trainer sends it, after conversion from the wire.
type Request struct {
	Paths       []string
	HotIn       time.Duration
	HotFor      time.Duration
	Readers     int
	User        string
	Replication int // explicit target, 0: the planner chooses
	DryRun      bool
}

// Validate checks the request against the configured bounds; per-path problems (not found,
// outside the prefixes...) are not errors but skipped entries of the plan.
func (r Request) Validate(c Config) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
	}
	switch {
	case len(r.Paths) == 0:
		return bad("no paths")
	case len(r.Paths) > c.MaxPaths:
		return bad("%d paths, at most %d per hint (name directories or globs instead)", len(r.Paths), c.MaxPaths)
	case r.User == "":
		return bad("no user")
	case r.HotIn < 0:
		return bad("hot-in %v is negative", r.HotIn)
	case r.HotIn > c.MaxLead:
		return bad("hot-in %v is beyond the maximum lead time %v", r.HotIn, c.MaxLead)
	case r.HotFor <= 0:
		return bad("hot-for %v must be positive", r.HotFor)
	case r.HotFor > c.MaxDuration:
		return bad("hot-for %v is beyond the maximum duration %v", r.HotFor, c.MaxDuration)
	case r.Readers <= 0:
		return bad("readers %d must be positive", r.Readers)
	case r.Replication < 0:
		return bad("replication %d is negative", r.Replication)
	case r.Replication > 32767:
		return bad("replication %d is not a valid HDFS factor", r.Replication)
	}
	for _, p := range r.Paths {
		if p == "" || p[0] != '/' {
			return bad("path %q is not absolute", p)
		}
		if _, err := path.Match(path.Base(p), ""); err != nil {
			return bad("path %q: bad glob: %v", p, err)
		}
	}
	return nil
}

// ClusterLoad is what the planner knows about the cluster and the hint's files, from
// GetDatanodeReport and InspectFiles.
type ClusterLoad struct {
	Live        int     // live DataNodes in service
	AvgXceivers float64 // mean DatanodeInfo.getXceiverCount() over live nodes
	Pending     int64   // pending reconstruction + low-redundancy blocks
	// Eligible are the live in-service DataNodes that can take and serve a new replica: fewer
	// xceivers than load.busy-xceivers and room for a few blocks; 0: unknown (Live is used).
	Eligible int
	// FreeBytes is the remaining space of the eligible DataNodes.
	FreeBytes int64
	// HotBytes is the hint's bytes at one replica; Concentration the share of them the busiest
	// current holder has a replica of (1: every file on the same nodes, as when one writer
	// wrote them; 0: unknown, taken as 1).
	HotBytes      int64
	HotBlocks     int
	Concentration float64
	// InFlightBytes are the extra replica bytes other hints are still copying.
	InFlightBytes int64
	// BaseFactor is the lowest current factor of the hint's files (0: unknown, 3 is used).
	BaseFactor int
}

// Factor is the planner's decision for one hint before per-file limits (quota).
type Factor struct {
	Target int     // factor every file of the hint is raised to (if below)
	Load   float64 // 0 quiet .. 1 busy
	Cap    int     // factor cap from load alone
	Demand int     // factor the readers alone ask for
	Spread int     // factor at which the busiest current holder serves no more than its share
	Notes  []string
}

// spreadDepth is how many hot block replicas each DataNode should hold on average: the
// replicas land at random, so with few per node the busiest holds several times the mean (a
// Poisson maximum). bench/sim: 64 blocks spread over 1,000 DataNodes give a barrier of 2.4x the
// physical limit at 8 per node, 1.7x at 16, 1.4x at 33.
const spreadDepth = 16

// PlanFactor applies the formula of the package doc:
//
//	L  = clamp(max(x̄ / busyXceivers, P / (busyPendingPerNode · N)), 0, 1)
//	C  = round(maxQuiet − L · (maxQuiet − maxBusy))
//	D  = ceil(R / readersPerReplica)                  (or the explicit factor)
//	Sp = ceil(min(1, max(f, depth / n)) · E)          (f concentration, n hot blocks, E eligible DataNodes)
//	B  = r + floor((spaceFraction · free − inFlight) / S)
//	T  = min(max(minFactor, min(D, Sp)), C, B, replicationMax, E)
func (c Config) PlanFactor(readers, requested int, load ClusterLoad) Factor {
	l := 0.0
	if c.BusyXceivers > 0 {
		l = load.AvgXceivers / c.BusyXceivers
	}
	if load.Live > 0 && c.BusyPendingPerNode > 0 {
		l = math.Max(l, float64(load.Pending)/(c.BusyPendingPerNode*float64(load.Live)))
	}
	l = math.Min(1, math.Max(0, l))
	f := Factor{Load: l}
	f.Cap = int(math.Round(float64(c.MaxFactorQuiet) - l*float64(c.MaxFactorQuiet-c.MaxFactorBusy)))
	f.Demand = (readers + c.ReadersPerReplica - 1) / c.ReadersPerReplica
	nodes := load.Eligible
	if nodes <= 0 {
		nodes = load.Live
	}
	conc := load.Concentration
	if conc <= 0 || conc > 1 {
		conc = 1
	}
	share := conc
	if load.HotBlocks > 0 {
		share = math.Min(1, math.Max(conc, spreadDepth/float64(load.HotBlocks)))
	}
	f.Spread = max(1, int(math.Ceil(share*float64(nodes))))
	want := max(c.MinFactor, min(f.Demand, f.Spread))
	if requested > 0 {
		want = requested
	} else if f.Spread < f.Demand && want > c.MinFactor {
		f.Notes = append(f.Notes, fmt.Sprintf("factor %d: enough for the busiest current holder (%.0f%% of the hot bytes) to serve 1/%d of the readers; more readers would not spread further",
			want, 100*conc, nodes))
	}
	t := want
	if t > f.Cap {
		t = f.Cap
		if l > 0 {
			f.Notes = append(f.Notes, fmt.Sprintf("factor %d capped at %d by cluster load %.2f", want, f.Cap, l))
		} else {
			f.Notes = append(f.Notes, fmt.Sprintf("factor %d capped at max-factor.quiet %d", want, f.Cap))
		}
	}
	if load.HotBytes > 0 && load.FreeBytes > 0 && c.MaxSpaceFraction > 0 {
		base := load.BaseFactor
		if base <= 0 {
			base = 3
		}
		budget := c.MaxSpaceFraction*float64(load.FreeBytes) - float64(load.InFlightBytes)
		b := base + int(math.Floor(math.Max(0, budget)/float64(load.HotBytes)))
		if t > b {
			f.Notes = append(f.Notes, fmt.Sprintf("factor %d capped at %d: the extra replicas may use %.0f%% of the eligible DataNodes' free space (newtricks.hotspot.max-space-fraction), less what other hints are copying",
				t, max(b, base), 100*c.MaxSpaceFraction))
			t = max(b, base)
		}
	}
	if t > c.ReplicationMax {
		f.Notes = append(f.Notes, fmt.Sprintf("factor %d capped at replication-max %d", t, c.ReplicationMax))
		t = c.ReplicationMax
	}
	if t > nodes {
		f.Notes = append(f.Notes, fmt.Sprintf("factor %d capped at %d live DataNodes", t, nodes))
		t = nodes
	}
	f.Target = t
	return f
}

// FilePlan is the decision for one file.
type FilePlan struct {
	ID       int64 // inode id
	Path     string
	Length   int64
	Original int // factor before the hint (the true original if another hint holds the file)
	Current  int // factor now
	Target   int
	Note     string
}

// Skipped is a requested path or file left out of the plan, with the reason.
type Skipped struct {
	Path   string
	Code   string // see SkippedPath.code in hotspot.proto
	Reason string
}

// Skip codes.
const (
	SkipNotFound     = "NOT_FOUND"
	SkipPermission   = "PERMISSION_DENIED"
	SkipOutside      = "OUTSIDE_PREFIXES"
	SkipQuota        = "QUOTA"
	SkipNotFile      = "NOT_A_FILE"
	SkipTooMany      = "TOO_MANY_FILES"
	SkipStateBudget  = "STATE_BUDGET"
	SkipErasureCoded = "ERASURE_CODED"
	SkipHostError    = "HOST_ERROR"
)

// quotaDir is an ancestor directory with a space quota.
type quotaDir struct {
	Path     string
	Headroom int64 // space quota - space consumed, in raw bytes (all replicas)
}

// applyQuota lowers each file's target so that the extra replicas of all files fit the
// headroom of every ancestor with a space quota, in order; files that cannot grow at all are
// returned as skipped. quotas maps a directory to its headroom; directories without a quota
// are absent.
func applyQuota(files []FilePlan, quotas map[string]int64) (kept []FilePlan, skipped []Skipped) {
	for _, f := range files {
		extra := int64(f.Target-f.Current) * f.Length
		if extra <= 0 || f.Length == 0 {
			kept = append(kept, f)
			continue
		}
		anc := ancestors(f.Path)
		limit, limitDir := int64(math.MaxInt64), ""
		for _, d := range anc {
			if h, ok := quotas[d]; ok && h < limit {
				limit, limitDir = h, d
			}
		}
		if limit >= extra {
			for _, d := range anc {
				if _, ok := quotas[d]; ok {
					quotas[d] -= extra
				}
			}
			kept = append(kept, f)
			continue
		}
		grow := int64(0)
		if limit > 0 {
			grow = limit / f.Length
		}
		if grow <= 0 {
			skipped = append(skipped, Skipped{Path: f.Path, Code: SkipQuota,
				Reason: fmt.Sprintf("space quota of %s leaves %d bytes, one more replica needs %d", limitDir, max(limit, 0), f.Length)})
			continue
		}
		nt := f.Current + int(grow)
		f.Note = fmt.Sprintf("target %d lowered to %d by the space quota of %s", f.Target, nt, limitDir)
		f.Target = nt
		used := grow * f.Length
		for _, d := range anc {
			if _, ok := quotas[d]; ok {
				quotas[d] -= used
			}
		}
		kept = append(kept, f)
	}
	return kept, skipped
}

// ancestors returns the directories above p, nearest first, "/" last.
func ancestors(p string) []string {
	var out []string
	for d := path.Dir(p); ; d = path.Dir(d) {
		out = append(out, d)
		if d == "/" {
			return out
		}
	}
}

// estimateReady estimates when the extra replicas are in place: the NameNode schedules the
// work after ScheduleDelay; each block is copied as one pipeline to all its new targets, so the
// copy takes at least the biggest block's transfer time, at least the bytes every live
// DataNode must receive divided by its copy bandwidth, and at least the redundancy intervals
// the NameNode needs to schedule every block (live x work multiplier blocks per interval).
func (c Config) estimateReady(files []FilePlan, blockSize map[string]int64, live int) time.Duration {
	var bytes int64
	var biggest int64
	blocks := 0
	for _, f := range files {
		if f.Target <= f.Current {
			continue
		}
		bytes += int64(f.Target-f.Current) * f.Length
		b := min(f.Length, blockSize[f.Path])
		if b == 0 {
			b = f.Length
		}
		biggest = max(biggest, b)
		if b > 0 {
			blocks += int((f.Length + b - 1) / b)
		}
	}
	if bytes == 0 {
		return 0
	}
	live = max(live, 1)
	perNode := float64(bytes) / float64(live) / float64(c.CopyBandwidth)
	pipe := float64(biggest) / float64(c.CopyBandwidth)
	// The NameNode schedules at most live x work multiplier blocks per redundancy interval.
	mult := 2 // Hadoop's default
	for _, b := range c.Boost {
		if b.Key == KeyWorkMultiplier {
			mult = b.Value
		}
	}
	rounds := math.Ceil(float64(blocks) / float64(live*mult))
	sched := math.Max(0, rounds-1) * c.RedundancyInterval.Seconds()
	return c.ScheduleDelay + time.Duration(math.Max(math.Max(perNode, pipe), sched)*float64(time.Second))
}

// sortSkipped orders skipped entries by path for stable answers.
func sortSkipped(s []Skipped) {
	sort.SliceStable(s, func(i, j int) bool { return s[i].Path < s[j].Path })
}
