// Package progress shows how far a long CLI operation has come, in the form its reader can
// use: a live bar (github.com/vbauerster/mpb/v8) when the output is a terminal, one plain
// timestamped line per notable change when it is not (logs, CI, pipes), and JSON lines for
// scripts (the commands' --json flag).
//
// Every long newtricks command uses it the same way (cluster up, hint create --wait, mirror
// wait, dataset index). Progress goes to stderr, so stdout keeps only the command's result
// and `newtricks X > out.txt` still shows a bar on the terminal (with --json, progress is JSON
// lines on stderr and the result JSON on stdout):
//
//	p := progress.New(stderr, progress.Options{JSON: jsonFlag})
//	defer p.Close()
//	t := p.Task("files ready", int64(len(files)), progress.Count) // total 0: not known yet
//	for ... {
//		t.Set(ready)                 // or t.Add(n); t.SetTotal(n) once the total is known
//		t.Status("waiting for 2 DataNodes") // or both at once: t.Update(ready, "...")
//	}
//	t.Done()                         // or t.DoneAt(n), t.Fail(err)
//
// A Task's methods are safe from any goroutine. Plain and JSON output are throttled: a line
// when the status text changes, when the value crosses a tenth of the total, at most every
// Options.Every otherwise, and always on Done or Fail. JSON lines look like
//
//	{"time":"2025-01-02T15:04:05.1Z","task":"files ready","state":"running","done":3,"total":12,"unit":"count","status":"..."}
//
// with state "running", "done" or "failed" (then "error" says why); Printf lines are
// {"time":...,"msg":"..."}.
package progress
