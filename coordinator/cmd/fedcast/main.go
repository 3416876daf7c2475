// Command fedcast is the one binary of fedcast: the coordinator server, the
// live demo, the headless LHA client, the research simulator and the privacy
// calculator. Run "fedcast help" for the list of subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"sort"
	"strings"
	"syscall"
)

// A command is one subcommand. Subcommands live in their own files and add
// themselves to the registry with register from an init function, so that
// they can be written and tested independently.
type command struct {
	// Name is the first word after "fedcast" (a path like "privacy epsilon"
	// for a nested command is registered under its first word and dispatches
	// the rest itself).
	Name string
	// Summary is one line for "fedcast help".
	Summary string
	// Run executes the command. args excludes the command name.
	Run func(ctx context.Context, env *Env, args []string) error
}

// Env is what a command may touch of the outside world, so tests can run
// commands in-process with buffers.
type Env struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	Getenv         func(string) string
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.Name]; dup {
		panic("fedcast: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

// usageError is a mistake in the command line; main prints it with a hint
// and exits with status 2.
type usageError struct {
	msg  string
	hint string
}

func (e *usageError) Error() string { return e.msg }

func usagef(hint, format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...), hint: hint}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &Env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin, Getenv: os.Getenv}
	os.Exit(run(ctx, env, os.Args[1:]))
}

// run dispatches args to a subcommand and returns the exit status.
func run(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(env.Stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "fedcast: unknown command %q\n\n", args[0])
		printHelp(env.Stderr)
		return 2
	}
	err := c.Run(ctx, env, args[1:])
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(env.Stderr, "fedcast %s: %s\n", c.Name, ue.msg)
		if ue.hint != "" {
			fmt.Fprintf(env.Stderr, "hint: %s\n", ue.hint)
		}
		return 2
	}
	fmt.Fprintf(env.Stderr, "fedcast %s: %s\n", c.Name, forPeople(err.Error()))
	return 1
}

// goPrefix matches the package prefixes of Go errors ("series: ",
// "session: ", …), which mean nothing to the people reading the CLI: at the
// start, after the ": " that wraps one error in another, or after a
// parenthesis; never inside a file name such as "run.json: ", nor a word
// of a sentence ("the study: …").
var goPrefix = regexp.MustCompile(`(^|: |\()(?:(?:series|session|protocol|study|privacy|fl|nn|model|forecast|ledger|server|lhaconn|experiment|audit|synth|metrics|strconv|json|backtest|plan|publish|secagg): )+`)

// forPeople drops the Go package prefixes from an error message.
func forPeople(msg string) string { return goPrefix.ReplaceAllString(msg, "$1") }

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "fedcast: federated, differentially private case-count forecasting")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: fedcast <command> [flags]   (fedcast <command> -h for its flags)")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Summary)
	}
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints its usage to env.Stderr.
func newFlagSet(env *Env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("fedcast "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "Usage: fedcast %s\n\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// flagSetHook, when set (the docs test), receives each command's flag set
// instead of parsing it: the command stops there with errFlagsSeen.
var flagSetHook func(fs *flag.FlagSet)

var errFlagsSeen = errors.New("flags seen")

// seeFlags hands fs to flagSetHook if one is set (errFlagsSeen), else nil.
func seeFlags(fs *flag.FlagSet) error {
	if flagSetHook == nil {
		return nil
	}
	flagSetHook(fs)
	return errFlagsSeen
}

// parseFlags parses args and turns flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := seeFlags(fs); err != nil {
		return err
	}
	if err := parseQuiet(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("run '"+fs.Name()+" -h' for the flags", "unexpected argument %q", strings.Join(fs.Args(), " "))
	}
	return nil
}

// parseQuiet is fs.Parse that prints the usage on -h only: a mistake is
// returned as a usage error, whose hint names the flag meant when an
// unknown flag is a typo of one, instead of the whole list of flags.
func parseQuiet(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		usage()
		return err
	}
	hint := "run '" + fs.Name() + " -h' for the flags"
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		if near := nearestFlag(fs, name); near != "" {
			hint = "did you mean --" + near + "? " + hint
		}
	}
	return &usageError{msg: err.Error(), hint: hint}
}

// nearestFlag returns the flag of fs nearest to name (at most 2 letters
// added, dropped or changed, and fewer than half of name's), or "".
func nearestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestD && 2*d < len(name) {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the number of letters added, dropped, changed or swapped
// with the next that turn a into b (optimal string alignment, on bytes).
func editDistance(a, b string) int {
	var prev2 []int
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev = prev, cur
	}
	return prev[len(b)]
}
