// Package events receives what the NameNode hook forwards (audited calls and inotify
// namespace events), drops duplicate namespace events by txid (the hook delivers at least
// once), keeps a bounded window of recent events for the API, and fans every event out to
// the subsystems that react to it (hotspot's reactive mode, the checkpoint mirror).
//
// The hook forwards only the union of the subsystems' Interests (Want), answered in Configure
// and in acknowledgements, and resumes its namespace stream after the txid every Cursor has
// marked durable, so a subscriber with persisted state sees each event exactly once.
package events
