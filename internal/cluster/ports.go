package cluster

import (
	"fmt"
	"net"
)

// FreePorts returns n distinct free TCP ports on 127.0.0.1. All listeners are held until
// every port is chosen, so the kernel never hands out the same port twice; another process
// may still take one before the daemon binds it, which Start detects and retries.
func FreePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// allocatePorts picks every port of a cluster with dataNodes DataNodes.
func allocatePorts(dataNodes int) (NameNodePorts, []DataNodePorts, error) {
	p, err := FreePorts(2 + 3*dataNodes)
	if err != nil {
		return NameNodePorts{}, nil, err
	}
	nn := NameNodePorts{RPC: p[0], HTTP: p[1]}
	dns := make([]DataNodePorts, dataNodes)
	for i := range dns {
		q := p[2+3*i:]
		dns[i] = DataNodePorts{Xfer: q[0], HTTP: q[1], IPC: q[2]}
	}
	return nn, dns, nil
}
