// Command cuckoo builds, queries and inspects cuckoo filters saved in files,
// serves filters over the Redis protocol, and measures them (demo, eval).
//
// Usage:
//
//	cuckoo build -o FILE [flags] INPUT   build a filter from a file of keys, one a line
//	cuckoo query FILE [KEY... | -]       look keys up (arguments, or lines on stdin)
//	cuckoo info [--json] FILE            print a filter's parameters, load and rates
//	cuckoo demo [flags]                  build a filter of synthetic URLs and measure it
//	cuckoo eval [flags]                  run the classic experiments; write a report with plots
//	cuckoo serve [flags]                 serve filters over the Redis protocol (RedisBloom's CF.*)
//	cuckoo cluster SUBCOMMAND [args]     create, inspect, grow, rebalance and fail over a cluster of serve nodes
//	cuckoo migrate --from HOST:PORT      copy filters from Redis Stack (RedisBloom) or Redis 8 to cuckoo serve, or back
//	cuckoo version                       print the module version, VCS revision (go build, go install) and Go version
//	cuckoo help [COMMAND]                print usage
//
// Flags go before the positional arguments. The exit status is 0 on success,
// 1 when query finds none of its keys, and 2 on any error. Run
// "cuckoo help COMMAND" for the flags of each command.
//
// Each command lives in its own file (build.go, query.go, info.go, demo.go,
// evalcmd.go, serve.go, cluster.go, migrate.go, version.go) and is listed in the
// commands table below; main only dispatches.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// Exit statuses, as grep uses them.
const (
	exitOK      = 0
	exitNoMatch = 1 // query: no key may be present
	exitError   = 2 // any error, usage errors included
)

// env is what a command may use of the process: its standard streams.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	cmd    *command // the command running
	help   func()   // prints the running command's usage, for -h
}

// command is one subcommand. Its run function parses its own flags.
type command struct {
	name     string
	synopsis string // the arguments, after "cuckoo NAME"
	summary  string // one line for the command list
	run      func(e *env, args []string) error
}

// commands lists the subcommands in the order usage shows them.
var commands = []command{
	{"build", "-o FILE [flags] INPUT", "build a filter from INPUT, one key a line (\"-\" for stdin)", runBuild},
	{"query", "FILE [KEY... | -]", "look keys up: the arguments, or one a line on stdin (none, or \"-\")", runQuery},
	{"info", "[--json] FILE", "print a filter's parameters, load and false-positive rates", runInfo},
	{"demo", "[--n N] [--fpr R] [--seed S] [--urls]", "build a filter of synthetic URLs and compare it with a Go map", runDemo},
	{"eval", "[--out DIR] [--quick] [--only NAME,...]", "run the classic experiments and write a report with plots", runEval},
	{"serve", "[--addr A] [--dir D] [--appendfsync M] [--requirepass P] [--maxmemory SIZE] [--metrics-addr A]", "serve cuckoo filters over the Redis protocol (RedisBloom's CF.* commands)", runServe},
	{"cluster", "SUBCOMMAND [flags] [arguments]", "run a cluster of cuckoo serve --cluster-enabled nodes (create, info, add-node, del-node, move-slots, rebalance, failover, fix)", runCluster},
	{"migrate", "--from HOST:PORT [--to HOST:PORT] [--match PATTERN] [--dry-run] [--replace]", "copy cuckoo filters from Redis Stack (RedisBloom) or Redis 8 to cuckoo serve, or back, checking each copy", runMigrate},
	{"version", "", "print the version: module, VCS revision and time (recorded by go build and go install, not go run), Go (also --version)", runVersion},
	{"help", "[COMMAND]", "print this usage, or a command's flags", nil},
}

func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// run executes the command line args (without the program name) and returns
// the exit status. Tests call it directly.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return exitError
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if name == "help" && len(rest) > 0 {
			c := lookup(rest[0])
			if c == nil || c.run == nil {
				return e.fail(&usageError{msg: fmt.Sprintf("help: unknown command %q", rest[0])})
			}
			e.cmd = c
			return e.finish(c.run(e, []string{"-h"}))
		}
		usage(stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	c := lookup(name)
	if c == nil {
		return e.fail(&usageError{msg: fmt.Sprintf("unknown command %q (run \"cuckoo help\" for the list)", name)})
	}
	e.cmd = c
	return e.finish(c.run(e, rest))
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "cuckoo builds, queries and inspects cuckoo filters, serves them over the\nRedis protocol, and measures them (demo, eval).\n\nUsage:\n\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n        %s\n", strings.TrimSpace("cuckoo "+c.name+" "+c.synopsis), c.summary)
	}
	fmt.Fprint(w, `
Flags go before the positional arguments. Exit status: 0 on success, 1 when
query finds none of its keys, 2 on any error. Run "cuckoo help COMMAND" for a
command's flags.
`)
}

// exitStatus is an error that ends a command with a status and no message.
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// usageError is a mistake in the command line: the message is followed by a
// hint, and the exit status is 2.
type usageError struct {
	msg  string
	hint string // for example the command's synopsis
}

func (u *usageError) Error() string { return u.msg }

// finish turns a command's result into an exit status, reporting err.
func (e *env) finish(err error) int {
	if err == nil {
		return exitOK
	}
	return e.fail(err)
}

// prefixed puts the running command's name before msg, unless msg starts
// with it already: every command's errors read "cuckoo: NAME: ...".
func (e *env) prefixed(msg string) string {
	if e.cmd == nil || strings.HasPrefix(msg, e.cmd.name+":") || strings.HasPrefix(msg, e.cmd.name+" ") {
		return msg
	}
	return e.cmd.name + ": " + msg
}

func (e *env) fail(err error) int {
	var s exitStatus
	if errors.As(err, &s) {
		return int(s)
	}
	fmt.Fprintf(e.stderr, "cuckoo: %s\n", e.prefixed(err.Error()))
	var u *usageError
	if errors.As(err, &u) && u.hint != "" {
		fmt.Fprintln(e.stderr, u.hint)
	}
	return exitError
}

// usageErrorf returns a usage error of the running command, with its
// synopsis as the hint.
func (e *env) usageErrorf(format string, args ...any) error {
	return &usageError{
		msg:  e.cmd.name + ": " + fmt.Sprintf(format, args...),
		hint: strings.TrimSpace("usage: cuckoo " + e.cmd.name + " " + e.cmd.synopsis),
	}
}

// flags returns a FlagSet for the running command whose errors the caller
// reports. describe, if not empty, is printed under the synopsis by -h.
func (e *env) flags(describe string) *flag.FlagSet {
	c := e.cmd
	name := c.name
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // parse reports errors, and prints e.help for -h
	e.help = func() {
		w := e.stdout
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace("usage: cuckoo "+name+" "+c.synopsis))
		if describe != "" {
			fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(describe))
		}
		if hasFlags(fs) {
			fmt.Fprintf(w, "Flags (before the positional arguments):\n")
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parse parses args with fs and checks the positional arguments: the ones
// named in need must be there and, unless hi is negative, at most hi in all.
// With -h it prints the usage and returns exitStatus(0).
func (e *env) parse(fs *flag.FlagSet, args []string, need []string, hi int) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			e.help()
			return exitStatus(exitOK)
		}
		return e.usageErrorf("%v", err)
	}
	n := fs.NArg()
	switch {
	case n < len(need):
		return e.usageErrorf("missing %s", need[n])
	case hi >= 0 && n > hi:
		extra := fs.Arg(hi)
		if strings.HasPrefix(extra, "-") && extra != "-" {
			return e.usageErrorf("flag %s after the positional arguments: flags go first", extra)
		}
		return e.usageErrorf("unexpected argument %q", extra)
	}
	return nil
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
