package hotspot

import (
	"math"
	"time"

	nnv1 "github.com/newtricks/newtricks/proto/gen/newtricksv1"
)

// msDuration converts wire milliseconds, saturating instead of overflowing so that a huge
// value is rejected by validation rather than wrapping to a small or negative one.
func msDuration(ms int64) time.Duration {
	const maxMs = math.MaxInt64 / int64(time.Millisecond)
	switch {
	case ms > maxMs:
		return math.MaxInt64
	case ms < -maxMs:
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}

func unixMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func requestFromProto(r *nnv1.CreateHintRequest) Request {
	return Request{
		Paths:       r.Paths,
		HotIn:       msDuration(r.HotInMs),
		HotFor:      msDuration(r.HotForMs),
		Readers:     int(r.Readers),
		User:        r.User,
		Replication: int(r.Replication),
		DryRun:      r.DryRun,
	}
}

func planToProto(p *Plan) *nnv1.HintPlan {
	out := &nnv1.HintPlan{
		HintId:           p.HintID,
		BytesToCopy:      p.BytesToCopy,
		EstimatedReadyMs: unixMs(p.EstimatedReady),
		HotFromMs:        unixMs(p.HotFrom),
		DeadlineMs:       unixMs(p.Deadline),
		SkippedOmitted:   int32(p.SkippedOmitted),
		Notes:            p.Notes,
		Partial:          p.Partial,
		Inputs: &nnv1.PlanInputs{
			LiveDatanodes:         int32(p.Load.Live),
			Load:                  p.Factor.Load,
			FactorCap:             int32(p.Factor.Cap),
			Demand:                int32(p.Factor.Demand),
			AvgXceivers:           p.Load.AvgXceivers,
			PendingReconstruction: p.Load.Pending,
			Spread:                int32(p.Factor.Spread),
			Concentration:         p.Load.Concentration,
			EligibleDatanodes:     int32(p.Load.Eligible),
			HotBytes:              p.Load.HotBytes,
			InFlightBytes:         p.Load.InFlightBytes,
		},
	}
	for _, f := range p.Files {
		out.Files = append(out.Files, &nnv1.FilePlan{Path: f.Path, Length: f.Length,
			OriginalReplication: int32(f.Original), TargetReplication: int32(f.Target), Note: f.Note})
	}
	for _, s := range p.Skipped {
		out.Skipped = append(out.Skipped, &nnv1.SkippedPath{Path: s.Path, Code: s.Code, Reason: s.Reason})
	}
	return out
}

// StatusToProto converts a HintStatus to its wire form.
func StatusToProto(s *HintStatus) *nnv1.HintStatus {
	out := &nnv1.HintStatus{
		HintId:     s.ID,
		State:      s.State,
		CreatedMs:  unixMs(s.Created),
		ReadyMs:    unixMs(s.ReadyAt),
		DeadlineMs: unixMs(s.Deadline),
		User:       s.User,
		Ready:      s.Ready(),
		Implicit:   s.Implicit,
		Notes:      s.Notes,
	}
	for _, f := range s.Files {
		out.Files = append(out.Files, &nnv1.FileProgress{Path: f.Path, OriginalReplication: int32(f.Original),
			TargetReplication: int32(f.Target), ReplicasPlaced: int32(f.Placed), Ready: f.Ready, Length: f.Length,
			FileId: f.ID, Result: f.Result, Error: f.Error})
	}
	return out
}

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// RequestToProto converts a Request to its wire form (for clients).
func RequestToProto(r Request) *nnv1.CreateHintRequest {
	return &nnv1.CreateHintRequest{
		Paths:       r.Paths,
		HotInMs:     r.HotIn.Milliseconds(),
		HotForMs:    r.HotFor.Milliseconds(),
		Readers:     int32(r.Readers),
		User:        r.User,
		Replication: int32(r.Replication),
		DryRun:      r.DryRun,
	}
}

// PlanFromProto converts a wire plan to a Plan (for clients).
func PlanFromProto(p *nnv1.HintPlan) *Plan {
	out := &Plan{
		HintID:         p.HintId,
		BytesToCopy:    p.BytesToCopy,
		EstimatedReady: msTime(p.EstimatedReadyMs),
		HotFrom:        msTime(p.HotFromMs),
		Deadline:       msTime(p.DeadlineMs),
		SkippedOmitted: int(p.SkippedOmitted),
		Notes:          p.Notes,
		Partial:        p.Partial,
	}
	if in := p.Inputs; in != nil {
		out.Load = ClusterLoad{Live: int(in.LiveDatanodes), AvgXceivers: in.AvgXceivers, Pending: in.PendingReconstruction,
			Eligible: int(in.EligibleDatanodes), HotBytes: in.HotBytes, Concentration: in.Concentration, InFlightBytes: in.InFlightBytes}
		out.Factor = Factor{Load: in.Load, Cap: int(in.FactorCap), Demand: int(in.Demand), Spread: int(in.Spread)}
	}
	for _, f := range p.Files {
		out.Files = append(out.Files, FilePlan{Path: f.Path, Length: f.Length, Original: int(f.OriginalReplication),
			Current: int(f.OriginalReplication), Target: int(f.TargetReplication), Note: f.Note})
	}
	for _, s := range p.Skipped {
		out.Skipped = append(out.Skipped, Skipped{Path: s.Path, Code: s.Code, Reason: s.Reason})
	}
	return out
}

// StatusFromProto converts a wire status to a HintStatus (for clients).
func StatusFromProto(s *nnv1.HintStatus) *HintStatus {
	out := &HintStatus{ID: s.HintId, State: s.State, User: s.User, Implicit: s.Implicit,
		Created: msTime(s.CreatedMs), ReadyAt: msTime(s.ReadyMs), Deadline: msTime(s.DeadlineMs), Notes: s.Notes}
	for _, f := range s.Files {
		out.Files = append(out.Files, FileProgress{ID: f.FileId, Path: f.Path, Length: f.Length, Original: int(f.OriginalReplication),
			Target: int(f.TargetReplication), Placed: int(f.ReplicasPlaced), Ready: f.Ready, Result: f.Result, Error: f.Error})
	}
	return out
}
