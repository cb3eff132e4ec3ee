package cluster

// Phases of StartStep.
const (
	// PhaseQuorum (HA only): ZooKeeper and the JournalNodes are starting.
	PhaseQuorum = "quorum"
	// PhaseFormat: `NameNode -format` runs (with HA also `zkfc -formatZK`).
	PhaseFormat = "format"
	// PhaseLaunch: the NameNode and DataNode JVMs are being launched.
	PhaseLaunch = "launch"
	// PhaseElect (HA only): waiting for NameNode 0 to become active.
	PhaseElect = "elect"
	// PhaseWait: the daemons run; waiting for the NameNode to leave safe mode with every
	// DataNode live.
	PhaseWait = "wait"
)

// StartStep is one observation of a starting cluster, passed to Config.Progress.
type StartStep struct {
	Phase string
	// NameNodeUp is true once the NameNode's JMX answers.
	NameNodeUp bool
	// SafeMode is the NameNode's safe mode explanation, empty when it is off.
	SafeMode string
	// Live is the DataNodes registered with capacity; Want how many Start waits for.
	Live, Want int
}

func (c *Cluster) progress(s StartStep) {
	if c.cfg.Progress != nil {
		c.cfg.Progress(s)
	}
}

func waitStep(st NameNodeStatus, err error, want int) StartStep {
	// With HA a status can come with an error (the standby or a ZKFC is not there yet): the
	// NameNode answered all the same.
	up := err == nil || len(st.LiveNodes) > 0 || st.SafeMode != ""
	s := StartStep{Phase: PhaseWait, Want: want, NameNodeUp: up, SafeMode: st.SafeMode}
	for _, l := range st.LiveNodes {
		if l.Capacity > 0 {
			s.Live++
		}
	}
	return s
}
