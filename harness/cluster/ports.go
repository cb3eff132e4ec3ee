package cluster

import (
	"fmt"
	"net"
	"sync"
)

// handedOut holds every port FreePorts has returned in this process. The kernel reuses a
// released ephemeral port readily, so two calls (say, one for a cluster's daemons and one for
// its co-processes) could otherwise return the same port, and two daemons would then race
// for it; one test process asks for a few thousand ports at most.
var (
	handedOutMu sync.Mutex
	handedOut   = map[int]bool{}
)

// FreePorts returns n distinct free TCP ports on 127.0.0.1, none returned before by this
// process. All listeners are held until every port is chosen, so the kernel never hands out
// the same port twice; another process may still take one before the daemon binds it, which
// Start detects and retries.
func FreePorts(n int) ([]int, error) {
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries > 100*n+1000 {
			return nil, fmt.Errorf("pick free port: no unused port after %d tries", tries)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick free port: %w", err)
		}
		ls = append(ls, l) // held open (also when skipped) so the kernel offers another
		p := l.Addr().(*net.TCPAddr).Port
		if handedOut[p] {
			continue
		}
		handedOut[p] = true
		ports = append(ports, p)
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
