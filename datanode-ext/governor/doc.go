// Package governor decides whether a DataNode has CPU to spare for transforms. It samples the
// node's CPU with gopsutil every interval and splits it into what datanode-ext itself uses and
// what everything else uses (the DataNode's block serving, other daemons, other jobs). When
// everything else uses more than the high threshold of the node's CPUs, the node sheds: it stops
// transforming and answers with raw sample bytes, which readers transform themselves. It stops
// shedding only when the other use falls below the low threshold (hysteresis, so a node near
// the threshold does not flap). Its own use is left out on purpose: a node that counted its
// transforms would shed because of them and resume as soon as it stopped, oscillating.
package governor
