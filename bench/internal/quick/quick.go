// Package quick holds what the benchmarks' -quick modes share: a set of small flag values
// applied where the command line did not set them, and their description for -help.
package quick

import (
	"flag"
	"sort"
	"strings"
)

// Apply sets each flag of values that the command line did not set explicitly (call after
// flag.Parse); an explicit flag always wins.
func Apply(values map[string]string) error {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for k, v := range values {
		if !set[k] {
			if err := flag.Set(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// String describes values as "-name value" pairs, sorted, for a flag's usage text.
func String(values map[string]string) string {
	var ks []string
	for k, v := range values {
		ks = append(ks, "-"+k+" "+v)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
