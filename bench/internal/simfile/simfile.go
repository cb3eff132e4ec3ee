// Package simfile is the file `bench-hotspot -sim-out` writes and `bench-sim -from` reads:
// both configurations of one bench-hotspot run, their setup and each case's barrier median
// (min, max), with the run's provenance. One definition for the writer and the reader, so a
// field the bench adds or renames cannot silently go missing on the model's side.
package simfile

// Run is one bench-hotspot run: its provenance and its configurations.
type Run struct {
	Commit    string   `json:"commit"`
	Dirty     bool     `json:"dirty"`
	Date      string   `json:"date"`
	LoadStart string   `json:"load_start"`
	LoadEnd   string   `json:"load_end"`
	Command   string   `json:"command"`
	Note      string   `json:"note,omitempty"` // a remark on the run; bench-hotspot writes none
	Phases    []*Phase `json:"phases"`
}

// Phase is one configuration of the run: the DataNodes that ran, their throttle, the storm,
// and what each case measured.
type Phase struct {
	Role      string  `json:"role"` // "check" (measured first) or "calibrate" (the headline)
	DataNodes int     `json:"datanodes"`
	Bandwidth int64   `json:"dn_bandwidth"`
	Readers   int     `json:"readers"`
	Files     int     `json:"files"`
	FileBytes int64   `json:"file_bytes"`
	BlockSize int64   `json:"block_size"`
	Interval  int     `json:"redundancy_interval_s"`
	LeadS     float64 `json:"lead_s"`
	Factor    int     `json:"factor"`
	LimitS    float64 `json:"physical_limit_s"`
	// per case: median, min and max barrier; median busiest/mean DataNode; median ready
	Barrier map[string][3]float64 `json:"barrier_s"`
	Share   map[string]float64    `json:"busiest_over_mean"`
	Ready   map[string]float64    `json:"ready_s,omitempty"`
}

// Med is case cs's median barrier in seconds (0 if it did not run).
func (p *Phase) Med(cs string) float64 { return p.Barrier[cs][0] }

// Phase is the configuration of role, or nil.
func (r *Run) Phase(role string) *Phase {
	for _, ph := range r.Phases {
		if ph.Role == role {
			return ph
		}
	}
	return nil
}
