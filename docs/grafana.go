package docs

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Query is one PromQL expression of a dashboard and where it is.
type Query struct {
	Panel string
	Expr  string
	// Metrics are the metric names the expression selects, as exposed on /metrics
	// (a histogram's _bucket/_sum/_count series are named by their family).
	Metrics []string
}

type panel struct {
	ID      int     `json:"id"`
	Type    string  `json:"type"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
}

// metricName matches the metrics newtricks dashboards may query: the co-processes' own
// (newtricks_*) and client_golang's process and Go runtime collectors.
var metricName = regexp.MustCompile(`\b(?:newtricks|process|go)_[a-zA-Z0-9_]+`)

// DashboardQueries reads a Grafana dashboard JSON file and returns every query in it
// (panel targets, rows' nested panels and template variables). It fails on a dashboard a
// Grafana could not use: no panels, duplicate panel ids, a panel without a datasource, a
// query that selects no metric.
func DashboardQueries(path string) ([]Query, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d struct {
		Title      string  `json:"title"`
		UID        string  `json:"uid"`
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		return nil, fmt.Errorf("%s: a dashboard needs a title, a uid and panels", path)
	}
	var qs []Query
	ids := map[int]string{}
	var walk func(ps []panel) error
	walk = func(ps []panel) error {
		for _, p := range ps {
			if prev, dup := ids[p.ID]; dup {
				return fmt.Errorf("%s: panels %q and %q share id %d", path, prev, p.Title, p.ID)
			}
			ids[p.ID] = p.Title
			if p.Type == "row" {
				if err := walk(p.Panels); err != nil {
					return err
				}
				continue
			}
			if p.Datasource == nil || p.Datasource.UID == "" {
				return fmt.Errorf("%s: panel %q has no datasource", path, p.Title)
			}
			if len(p.Targets) == 0 {
				return fmt.Errorf("%s: panel %q has no query", path, p.Title)
			}
			for _, t := range p.Targets {
				qs = append(qs, Query{Panel: p.Title, Expr: t.Expr})
			}
		}
		return nil
	}
	if err := walk(d.Panels); err != nil {
		return nil, err
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			var s string
			if json.Unmarshal(v.Query, &s) != nil {
				return nil, fmt.Errorf("%s: variable %s: unreadable query", path, v.Name)
			}
			q.Query = s
		}
		qs = append(qs, Query{Panel: "variable $" + v.Name, Expr: q.Query})
	}
	for i := range qs {
		qs[i].Metrics = exprMetrics(qs[i].Expr)
		if len(qs[i].Metrics) == 0 {
			return nil, fmt.Errorf("%s: %s: query %q selects no newtricks_, process_ or go_ metric", path, qs[i].Panel, qs[i].Expr)
		}
	}
	return qs, nil
}

// exprMetrics returns the metric families an expression selects.
func exprMetrics(expr string) []string {
	seen := map[string]bool{}
	for _, m := range metricName.FindAllString(stripStrings(expr), -1) {
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if strings.HasSuffix(m, suf) && strings.HasPrefix(m, "newtricks_") {
				m = strings.TrimSuffix(m, suf)
				break
			}
		}
		seen[m] = true
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// stripStrings blanks quoted label values so that a value never reads as a metric name.
func stripStrings(expr string) string {
	var b strings.Builder
	in := byte(0)
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case in != 0 && c == '\\':
			i++
		case in != 0 && c == in:
			in = 0
		case in != 0:
		case c == '"' || c == '\'' || c == '`':
			in = c
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// AllMetrics is the sorted union of the queries' metrics.
func AllMetrics(qs []Query) []string {
	seen := map[string]bool{}
	for _, q := range qs {
		for _, m := range q.Metrics {
			seen[m] = true
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}
