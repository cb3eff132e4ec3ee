package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
)

// command is one top-level subcommand. To add one, create a file in this directory with
//
//	func init() { register("name", command{summary: "...", run: runName}) }
type command struct {
	// summary is the one line shown by `newtricks help`.
	summary string
	// run gets the arguments after the subcommand name. Return a usageError for bad
	// arguments (exit 2, usage printed); any other error exits 1.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the registry, filled by init functions.
var commands = map[string]command{}

func register(name string, c command) {
	if _, dup := commands[name]; dup {
		panic("newtricks: command registered twice: " + name)
	}
	commands[name] = c
}

// usageError is a mistake in the command line; its message is printed with the usage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// errSilent exits 1 without printing anything more (the command already reported).
var errSilent = errors.New("")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "newtricks: unknown command %q\n\n", args[0])
		printUsage(stderr)
		return 2
	}
	err := c.run(ctx, args[1:], stdout, stderr)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "newtricks %s: %s\n(run `newtricks %s -h` for usage)\n", args[0], ue.msg, args[0])
		return 2
	case errors.Is(err, errSilent):
		return 1
	default:
		fmt.Fprintf(stderr, "newtricks %s: %v\n", args[0], err)
		return 1
	}
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: newtricks <command> [arguments]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
}
