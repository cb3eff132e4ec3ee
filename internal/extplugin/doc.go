// Package extplugin is the go-plugin glue shared by the newtricks co-processes (namenode-ext,
// datanode-ext): the handshake the Java hooks speak, serving a co-process's gRPC services over
// go-plugin's unix socket, logging to the real stderr, and exiting when the Hadoop daemon that
// launched it is gone (go-plugin itself does not notice a dead parent).
package extplugin
