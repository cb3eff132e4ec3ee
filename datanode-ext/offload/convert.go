package offload

import (
	"time"

	"github.com/newtricks/newtricks/datanode-ext/governor"
	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	"github.com/newtricks/newtricks/schedule"
)

// Conversions between the Offload service's messages and the package's own types: the edge
// (server.go) is the only caller. They copy fields and never fail; what the wire gets wrong
// is the Manager's to refuse, with the error the caller sees.

// openRequestFromProto converts an OpenSessionRequest (its user is the edge's to resolve).
func openRequestFromProto(r *pb.OpenSessionRequest) OpenRequest {
	out := OpenRequest{
		Rank:              int(r.GetRank()),
		StartStep:         r.GetStartStep(),
		Lookahead:         int(r.GetLookahead()),
		DeterminismDomain: r.GetDeterminismDomain(),
		RawOnly:           r.GetRawOnly(),
	}
	out.Schedule, out.scheduleErr = schedule.FromProto(r.GetSchedule())
	if len(r.GetSources()) > 0 {
		out.Sources = make([]Source, len(r.GetSources()))
		for i, s := range r.GetSources() {
			out.Sources[i] = Source{IndexSHA256: s.GetIndexSha256()}
		}
	}
	if len(r.GetMembers()) > 0 {
		out.Members = make([]string, len(r.GetMembers()))
		for i, m := range r.GetMembers() {
			out.Members[i] = m.GetDatanodeUuid()
		}
	}
	return out
}

// openResultToProto converts an opened session; the edge adds what only it knows (the
// transfer address, the version).
func openResultToProto(r OpenResult) *pb.OpenSessionResponse {
	return &pb.OpenSessionResponse{SessionId: r.SessionID, DatanodeUuid: r.DatanodeUUID, DeterminismDomain: r.DeterminismDomain,
		DomainMatch: r.DomainMatch, Lookahead: uint32(r.Lookahead), Shedding: r.Shedding}
}

// stepRequestFromProto converts a GetStepRequest.
func stepRequestFromProto(r *pb.GetStepRequest) StepRequest {
	return StepRequest{SessionID: r.GetSessionId(), Step: r.GetStep(), Slots: r.GetSlots(),
		MaxWait: msDuration(r.GetMaxWaitMs())}
}

// msDuration converts wire milliseconds (a uint32 cannot overflow a Duration).
func msDuration(ms uint32) time.Duration { return time.Duration(ms) * time.Millisecond }

// sampleToProto converts an answered sample; its error becomes a code (sampleCode) and a text.
func sampleToProto(s Sample) *pb.OffloadSample {
	out := &pb.OffloadSample{Step: s.Step, Slot: s.Slot, Source: uint32(s.Source), Key: s.Key, Epoch: s.Epoch,
		Frames: s.Frames, NodeMicros: s.NodeMicros, Members: membersToProto(s.Members)}
	if s.Err != nil {
		out.ErrorCode, out.Error = int32(sampleCode(s.Err)), s.Err.Error()
	}
	return out
}

// samplesToProto converts a batch of answered samples.
func samplesToProto(b []Sample) []*pb.OffloadSample {
	out := make([]*pb.OffloadSample, len(b))
	for i, s := range b {
		out[i] = sampleToProto(s)
	}
	return out
}

// nodeStatusToProto reports a node: its identity, its governor, its queue and its totals.
func nodeStatusToProto(uuid, xfer, domain string, g governor.Status, c Counters, cfg Config) *pb.OffloadNodeStatus {
	return &pb.OffloadNodeStatus{
		DatanodeUuid: uuid, XferAddr: xfer, DeterminismDomain: domain,
		Shedding: g.Shedding, CpuOther: g.Other, CpuOwn: g.Own, ThresholdHigh: g.High, ThresholdLow: g.Low,
		Workers: uint32(cfg.Workers), CpuBudget: float64(cfg.Workers), Sessions: uint32(c.Sessions),
		QueuedBytes: c.QueuedBytes, QueueMaxBytes: cfg.QueueMaxBytes,
		SamplesTransformed: c.Transformed, SamplesRaw: c.Raw, SampleErrors: c.Errors, ShedTransitions: g.Transitions,
	}
}
