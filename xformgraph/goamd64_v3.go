//go:build amd64.v3 && !amd64.v4

package xformgraph

// goamd64 is the GOAMD64 level this file was compiled for (the toolchain sets the
// amd64.vN build tags for every level up to GOAMD64).
const goamd64 = "v3"
