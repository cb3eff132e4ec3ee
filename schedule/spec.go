package schedule

import (
	"fmt"
	"math"
	"path"
	"regexp"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/newtricks/newtricks/proto/gen/newtricksv1"
	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
	"github.com/newtricks/newtricks/xformgraph"
)

// Version is the only spec version this package computes.
const Version = 1

// Limits of a spec. They keep a hostile or mistaken spec from costing a DataNode memory or
// time before it is rejected.
const (
	MaxGlobalBatch     = 1 << 16
	MaxSources         = 256
	MaxPhases          = 4096
	MaxExplicitSamples = 1 << 22
	MaxSpecBytes       = 32 << 20
)

// Sampler orders the samples of one source.
type Sampler int

const (
	// Shuffle reads each source in a fresh pseudo-random permutation per epoch.
	Shuffle Sampler = iota
	// Sequential reads each source in index order.
	Sequential
)

func (s Sampler) String() string {
	if s == Sequential {
		return "sequential"
	}
	return "shuffle"
}

// Source is one dataset mixed into every step.
type Source struct {
	Name    string
	Dataset string // absolute HDFS path of the dataset directory
	Weight  float64
	Graph   *xformv1.Graph
}

// Phase sets the mixing weights from step From on.
type Phase struct {
	From    uint64
	Weights []float64
}

// ExplicitSample is one entry of an explicit step.
type ExplicitSample struct {
	Source int
	Key    string
	Epoch  uint64
}

// Spec is a validated schedule (build it with FromProto or ParseJSON).
type Spec struct {
	Name        string
	Seed        uint64
	GlobalBatch int
	WorldSize   int
	Sampler     Sampler
	Sources     []Source
	Phases      []Phase
	Explicit    [][]ExplicitSample
	MaxSteps    uint64
}

var nameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ParseJSON reads the JSON form (protojson of newtricks.v1.ScheduleSpec) and validates it.
// Unknown fields are an error.
func ParseJSON(b []byte) (*Spec, error) {
	if len(b) > MaxSpecBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrInvalid, len(b), MaxSpecBytes)
	}
	m := &pb.ScheduleSpec{}
	if err := (protojson.UnmarshalOptions{}).Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return FromProto(m)
}

// FromProto converts and validates a spec: structure, limits, weights, and every source's
// graph (compiled with xformgraph's default limits), so that nothing is read or transformed
// for a spec that cannot run.
func FromProto(m *pb.ScheduleSpec) (*Spec, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: no spec", ErrInvalid)
	}
	if n := proto.Size(m); n > MaxSpecBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrInvalid, n, MaxSpecBytes)
	}
	if m.GetVersion() != Version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrInvalid, m.GetVersion(), Version)
	}
	s := &Spec{
		Name: m.GetName(), Seed: m.GetSeed(),
		GlobalBatch: int(m.GetGlobalBatch()), WorldSize: int(m.GetWorldSize()),
		MaxSteps: m.GetMaxSteps(),
	}
	switch m.GetSampler() {
	case pb.ScheduleSampler_SCHEDULE_SAMPLER_UNSPECIFIED, pb.ScheduleSampler_SCHEDULE_SAMPLER_SHUFFLE:
		s.Sampler = Shuffle
	case pb.ScheduleSampler_SCHEDULE_SAMPLER_SEQUENTIAL:
		s.Sampler = Sequential
	default:
		return nil, fmt.Errorf("%w: unknown sampler %d", ErrInvalid, m.GetSampler())
	}
	for _, src := range m.GetSources() {
		s.Sources = append(s.Sources, Source{Name: src.GetName(), Dataset: src.GetDataset(), Weight: src.GetWeight(), Graph: src.GetGraph()})
	}
	for _, p := range m.GetPhases() {
		s.Phases = append(s.Phases, Phase{From: p.GetFromStep(), Weights: append([]float64(nil), p.GetWeights()...)})
	}
	total := 0
	for i, st := range m.GetExplicitSteps() {
		total += len(st.GetSamples())
		if total > MaxExplicitSamples {
			return nil, fmt.Errorf("%w: explicit steps hold more than %d samples (at step %d)", ErrInvalid, MaxExplicitSamples, i)
		}
		step := make([]ExplicitSample, len(st.GetSamples()))
		for j, x := range st.GetSamples() {
			step[j] = ExplicitSample{Source: int(x.GetSource()), Key: x.GetKey(), Epoch: x.GetEpoch()}
		}
		s.Explicit = append(s.Explicit, step)
	}
	return s, s.Validate()
}

// Validate checks the spec completely.
func (s *Spec) Validate() error {
	if s.GlobalBatch < 1 || s.GlobalBatch > MaxGlobalBatch {
		return fmt.Errorf("%w: global_batch %d must be in [1, %d]", ErrInvalid, s.GlobalBatch, MaxGlobalBatch)
	}
	if s.WorldSize < 1 || s.WorldSize > s.GlobalBatch || s.GlobalBatch%s.WorldSize != 0 {
		return fmt.Errorf("%w: world_size %d must divide global_batch %d", ErrInvalid, s.WorldSize, s.GlobalBatch)
	}
	if len(s.Sources) == 0 || len(s.Sources) > MaxSources {
		return fmt.Errorf("%w: %d sources, want 1..%d", ErrInvalid, len(s.Sources), MaxSources)
	}
	names := map[string]bool{}
	for i, src := range s.Sources {
		if !nameRe.MatchString(src.Name) || names[src.Name] {
			return fmt.Errorf("%w: source %d: name %q must be unique and match %s", ErrInvalid, i, src.Name, nameRe)
		}
		names[src.Name] = true
		if src.Dataset == "" || !path.IsAbs(src.Dataset) || path.Clean(src.Dataset) != src.Dataset {
			return fmt.Errorf("%w: source %q: dataset %q must be an absolute, clean HDFS path", ErrInvalid, src.Name, src.Dataset)
		}
		if err := checkWeight(src.Weight); err != nil {
			return fmt.Errorf("%w: source %q: weight: %v", ErrInvalid, src.Name, err)
		}
		if src.Graph == nil {
			return fmt.Errorf("%w: source %q has no graph", ErrInvalid, src.Name)
		}
		if _, err := xformgraph.Compile(src.Graph, nil, xformgraph.Limits{}); err != nil {
			return fmt.Errorf("%w: source %q: graph: %w", ErrInvalid, src.Name, err)
		}
	}
	if len(s.Explicit) > 0 {
		if len(s.Phases) > 0 {
			return fmt.Errorf("%w: explicit steps and weight phases exclude each other", ErrInvalid)
		}
		for i, st := range s.Explicit {
			if len(st) != s.GlobalBatch {
				return fmt.Errorf("%w: explicit step %d has %d samples, global_batch is %d", ErrInvalid, i, len(st), s.GlobalBatch)
			}
			for j, x := range st {
				if x.Source < 0 || x.Source >= len(s.Sources) || x.Key == "" {
					return fmt.Errorf("%w: explicit step %d sample %d: source %d key %q", ErrInvalid, i, j, x.Source, x.Key)
				}
			}
		}
		return nil
	}
	if len(s.Phases) > MaxPhases {
		return fmt.Errorf("%w: %d phases, limit %d", ErrInvalid, len(s.Phases), MaxPhases)
	}
	if len(s.Phases) == 0 {
		w := make([]float64, len(s.Sources))
		for i, src := range s.Sources {
			w[i] = src.Weight
		}
		if err := checkWeights(w, len(s.Sources)); err != nil {
			return fmt.Errorf("%w: source weights: %v", ErrInvalid, err)
		}
	}
	for i, p := range s.Phases {
		if i == 0 && p.From != 0 {
			return fmt.Errorf("%w: the first phase starts at step %d, must be 0", ErrInvalid, p.From)
		}
		if i > 0 && p.From <= s.Phases[i-1].From {
			return fmt.Errorf("%w: phase %d starts at step %d, not after phase %d (step %d)", ErrInvalid, i, p.From, i-1, s.Phases[i-1].From)
		}
		if err := checkWeights(p.Weights, len(s.Sources)); err != nil {
			return fmt.Errorf("%w: phase %d (from step %d): %v", ErrInvalid, i, p.From, err)
		}
	}
	return nil
}

func checkWeight(w float64) error {
	if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 || w > 1e12 {
		return fmt.Errorf("%v is not a finite number in [0, 1e12]", w)
	}
	return nil
}

func checkWeights(w []float64, n int) error {
	if len(w) != n {
		return fmt.Errorf("%d weights for %d sources", len(w), n)
	}
	sum := 0.0
	for i, x := range w {
		if err := checkWeight(x); err != nil {
			return fmt.Errorf("weight %d: %v", i, err)
		}
		sum += x
	}
	if sum <= 0 {
		return fmt.Errorf("weights sum to 0")
	}
	return nil
}

// ToProto converts back to the wire form.
func (s *Spec) ToProto() *pb.ScheduleSpec {
	m := &pb.ScheduleSpec{
		Version: Version, Name: s.Name, Seed: s.Seed,
		GlobalBatch: uint32(s.GlobalBatch), WorldSize: uint32(s.WorldSize), MaxSteps: s.MaxSteps,
		Sampler: pb.ScheduleSampler_SCHEDULE_SAMPLER_SHUFFLE,
	}
	if s.Sampler == Sequential {
		m.Sampler = pb.ScheduleSampler_SCHEDULE_SAMPLER_SEQUENTIAL
	}
	for _, src := range s.Sources {
		m.Sources = append(m.Sources, &pb.ScheduleSource{Name: src.Name, Dataset: src.Dataset, Weight: src.Weight, Graph: src.Graph})
	}
	for _, p := range s.Phases {
		m.Phases = append(m.Phases, &pb.WeightPhase{FromStep: p.From, Weights: p.Weights})
	}
	for _, st := range s.Explicit {
		e := &pb.ExplicitStep{}
		for _, x := range st {
			e.Samples = append(e.Samples, &pb.ExplicitSample{Source: uint32(x.Source), Key: x.Key, Epoch: x.Epoch})
		}
		m.ExplicitSteps = append(m.ExplicitSteps, e)
	}
	return m
}

// weightsAt returns the mixing weights of step s.
func (s *Spec) weightsAt(step uint64) []float64 {
	if len(s.Phases) == 0 {
		w := make([]float64, len(s.Sources))
		for i, src := range s.Sources {
			w[i] = src.Weight
		}
		return w
	}
	lo, hi := 0, len(s.Phases)-1
	for lo < hi { // last phase with From <= step
		mid := (lo + hi + 1) / 2
		if s.Phases[mid].From <= step {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return s.Phases[lo].Weights
}
