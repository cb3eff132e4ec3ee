//go:build !amd64

package xformgraph

// goamd64 is empty on other architectures.
const goamd64 = ""
