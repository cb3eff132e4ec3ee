package doctor

import (
	"net/url"
	"slices"
	"strings"
)

const (
	EventJournalClass  = "io.newtricks.hadoop.EventJournal"
	keyEditsDir        = "dfs.namenode.edits.dir"
	keyEditsRequired   = "dfs.namenode.edits.dir.required"
	keyJournalPlugin   = "dfs.namenode.edits.journal-plugin.newtricks"
	journalScheme      = "newtricks"
	journalExampleURI  = "newtricks:///events"
	journalFallbackMsg = "namespace events then come from polling the edit log (seconds late on a long segment, and NameNode CPU)"
)

// checkEventJournal checks the NameNode's event journal: a newtricks:// edits dir needs the
// journal plugin (or the NameNode does not start) and must not be required (its failure
// would stop the NameNode); without it, the hook falls back to polling.
func (d *doctor) checkEventJournal() {
	const check = "namenode.event-journal"
	var uris []string
	for _, e := range d.conf.List(keyEditsDir) {
		if u, err := url.Parse(e); err == nil && u.Scheme == journalScheme {
			uris = append(uris, e)
		}
	}
	plugin := d.conf.Get(keyJournalPlugin, "")
	switch {
	case len(uris) > 0 && plugin == "":
		d.r.fail(check, keyJournalPlugin, "%s lists %s but %s is not set: the NameNode will not start; set it to %s",
			keyEditsDir, strings.Join(uris, ","), keyJournalPlugin, EventJournalClass)
	case plugin != "" && plugin != EventJournalClass:
		d.r.fail(check, keyJournalPlugin, "%s=%s: the newtricks journal is %s (a wrong class stops the NameNode when %s lists a newtricks:// dir)",
			keyJournalPlugin, plugin, EventJournalClass, keyEditsDir)
	case len(uris) > 0 && slices.ContainsFunc(d.conf.List(keyEditsRequired), func(r string) bool { return slices.Contains(uris, r) }):
		d.r.fail(check, keyEditsRequired, "%s lists the newtricks journal: its failure would stop the NameNode; leave it out (the hook falls back to polling)",
			keyEditsRequired)
	case len(uris) == 0 && plugin != "":
		d.r.warn(check, keyEditsDir, "%s is set but %s does not list %s: %s", keyJournalPlugin, keyEditsDir, journalExampleURI, journalFallbackMsg)
	case len(uris) == 0:
		d.r.warn(check, keyEditsDir, "the event journal is off (add %s to %s and %s=%s): %s",
			journalExampleURI, keyEditsDir, keyJournalPlugin, EventJournalClass, journalFallbackMsg)
	default:
		d.r.pass(check, keyEditsDir, "the event journal streams namespace events (%s)", strings.Join(uris, ","))
	}
}
