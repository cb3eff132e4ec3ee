// Package events receives what the NameNode hook forwards (audited calls and inotify
// namespace events), drops duplicate namespace events by txid (the hook delivers at least
// once), keeps a bounded window of recent events for the API, and fans every event out to
// the subsystems that react to it (hotspot's reactive mode, the checkpoint mirror).
package events
