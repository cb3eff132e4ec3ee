package tokenize

// Packer packs documents into rows of a fixed length, the rule of Hugging Face's run_clm
// (group_texts) with an optional separator: the ids of every document (encoded without
// truncation or padding) are concatenated in order, Sep (if set) after each document, and
// the stream is cut into rows of Length tokens. A last partial row is padded with *Pad (on
// the left if PadLeft, attention mask 0) when Pad is set, else dropped.
type Packer struct {
	Length  int
	Sep     *uint32
	Pad     *uint32
	PadLeft bool

	stream []uint32
}

// Add appends one document's ids.
func (p *Packer) Add(ids []uint32) {
	p.stream = append(p.stream, ids...)
	if p.Sep != nil {
		p.stream = append(p.stream, *p.Sep)
	}
}

// Tokens is the number of ids added so far (separators included).
func (p *Packer) Tokens() int { return len(p.stream) }

// Rows returns the packed rows, row-major, their attention mask and the row count.
func (p *Packer) Rows() (ids []uint32, mask []uint8, rows int) {
	l := p.Length
	full := len(p.stream) / l * l
	rows = full / l
	rest := len(p.stream) - full
	if rest > 0 && p.Pad != nil {
		rows++
	}
	ids = make([]uint32, rows*l)
	mask = make([]uint8, rows*l)
	copy(ids, p.stream[:full])
	for i := 0; i < full; i++ {
		mask[i] = 1
	}
	if rest > 0 && p.Pad != nil {
		row, m := ids[full:], mask[full:]
		off := 0
		if p.PadLeft {
			off = l - rest
		}
		for i := range row {
			row[i] = *p.Pad
		}
		copy(row[off:], p.stream[full:])
		for i := off; i < off+rest; i++ {
			m[i] = 1
		}
	}
	return ids, mask, rows
}
