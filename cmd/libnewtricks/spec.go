package main

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/proto"

	xformv1 "github.com/newtricks/newtricks/proto/gen/xformv1"
	"github.com/newtricks/newtricks/xformgraph"
)

// compileSpec compiles a graph spec with the default registry and default limits, as the
// DataNode's transform service does, so both sides run the same graph.
func compileSpec(spec []byte) (*xformgraph.Graph, error) {
	var g *xformv1.Graph
	if t := bytes.TrimLeft(spec, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		var err error
		if g, err = xformgraph.ParseJSON(spec); err != nil {
			return nil, err
		}
	} else {
		g = &xformv1.Graph{}
		if err := proto.Unmarshal(spec, g); err != nil {
			return nil, fmt.Errorf("%w: binary graph spec: %v", xformgraph.ErrInvalidGraph, err)
		}
	}
	return xformgraph.Compile(g, nil, xformgraph.Limits{})
}
