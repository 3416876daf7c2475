package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
)

// invocation is one `fedcast …` command line found in a document.
type invocation struct {
	where string // file:line
	args  []string
}

// inlineCode matches a Markdown code span.
var inlineCode = regexp.MustCompile("`([^`\n]+)`")

// docInvocations returns the fedcast command lines of a Markdown text:
// lines of fenced code blocks that start with fedcast (or bin/fedcast,
// ./fedcast, $ fedcast), with their backslash continuations, and code
// spans in the prose that start with "fedcast ".
func docInvocations(name, text string) []invocation {
	var out []invocation
	lines := strings.Split(text, "\n")
	fenced := false
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			cmd, ok := commandLine(line)
			if !ok {
				continue
			}
			start := i
			for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
				i++
				cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
			}
			out = append(out, invocation{fmt.Sprintf("%s:%d", name, start+1), splitArgs(cmd)})
			continue
		}
		for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
			if cmd, ok := commandLine(m[1]); ok {
				out = append(out, invocation{fmt.Sprintf("%s:%d", name, i+1), splitArgs(cmd)})
			}
		}
	}
	return out
}

// commandLine returns what follows "fedcast " on a command line.
func commandLine(s string) (string, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "$ ")
	for _, p := range []string{"fedcast ", "bin/fedcast ", "./bin/fedcast ", "./fedcast "} {
		if strings.HasPrefix(s, p) {
			return strings.TrimPrefix(s, p), true
		}
	}
	return "", false
}

// splitArgs splits a shell line into words, up to a comment, a pipe, a
// redirection or a second command; quotes are removed and the brackets of
// optional parts dropped (their flags are checked too).
func splitArgs(s string) []string {
	var args []string
	for _, w := range strings.Fields(s) {
		if w == "#" || strings.HasPrefix(w, "#") || w == "|" || w == "&&" || w == ";" || w == "&" ||
			strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") {
			break
		}
		w = strings.Trim(w, `'"[]()`)
		if w != "" {
			args = append(args, w)
		}
	}
	return args
}

// checkInvocation reports what is wrong with one invocation: an unknown
// command, or a flag its flag set does not define.
func checkInvocation(inv invocation) []string {
	if len(inv.args) == 0 {
		return nil
	}
	if inv.args[0] == "help" || inv.args[0] == "…" || inv.args[0] == "..." || inv.args[0] == "<command>" {
		return nil
	}
	// "privacy epsilon|noise": each alternative.
	if len(inv.args) > 1 && strings.Contains(inv.args[1], "|") && !strings.HasPrefix(inv.args[1], "-") {
		var probs []string
		for _, alt := range strings.Split(inv.args[1], "|") {
			a := append([]string{inv.args[0], alt}, inv.args[2:]...)
			probs = append(probs, checkInvocation(invocation{inv.where, a})...)
		}
		return probs
	}
	if _, ok := commands[inv.args[0]]; !ok {
		return []string{fmt.Sprintf("%s: fedcast %s: no such command", inv.where, inv.args[0])}
	}
	var fs *flag.FlagSet
	flagSetHook = func(f *flag.FlagSet) { fs = f }
	defer func() { flagSetHook = nil }()
	// Only the words up to the first flag choose the (sub)command.
	words := []string{}
	for _, a := range inv.args {
		if strings.HasPrefix(a, "-") {
			break
		}
		words = append(words, a)
	}
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &out, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	err := commands[inv.args[0]].Run(context.Background(), env, words[1:])
	if fs == nil || !errors.Is(err, errFlagsSeen) {
		return []string{fmt.Sprintf("%s: fedcast %s: no flag set reached (%v)", inv.where, strings.Join(words, " "), err)}
	}
	var probs []string
	for _, a := range inv.args {
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" || strings.HasPrefix(a, "-…") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "h" || name == "help" {
			continue
		}
		if fs.Lookup(name) == nil {
			probs = append(probs, fmt.Sprintf("%s: fedcast %s has no flag --%s", inv.where, strings.Join(words, " "), name))
		}
	}
	return probs
}

// TestDocsFlags: every `fedcast …` command line in README.md and docs/*.md
// names a real command and only flags its flag set defines.
func TestDocsFlags(t *testing.T) {
	root := testkit.RepoRoot()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, inv := range docInvocations(rel, string(b)) {
			n++
			for _, p := range checkInvocation(inv) {
				t.Error(p)
			}
		}
	}
	if n < 20 {
		t.Errorf("found only %d fedcast command lines in the docs: the scanner is broken", n)
	}
}

// TestDocsFlagsCatchesMadeUpFlags: the checker fails on a made-up flag, an
// unknown command and a flag of another command, and passes real lines
// (fenced, continued with a backslash, and inline).
func TestDocsFlagsCatchesMadeUpFlags(t *testing.T) {
	doc := "Run `fedcast client --model-out m.json` after\n\n```sh\nfedcast study new --lhas 3 --made-up-flag 1 --out s.json\n" +
		"fedcast frobnicate --x\nfedcast serve --study s.json \\\n  --lhas 3\n```\n"
	var probs []string
	for _, inv := range docInvocations("doc.md", doc) {
		probs = append(probs, checkInvocation(inv)...)
	}
	want := []string{"doc.md:1: fedcast client has no flag --model-out", "doc.md:4: fedcast study new has no flag --made-up-flag",
		"doc.md:5: fedcast frobnicate: no such command", "doc.md:6: fedcast serve has no flag --lhas"}
	if strings.Join(probs, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(probs, "\n"), strings.Join(want, "\n"))
	}
	good := "```\nfedcast client --join http://h/join#T --data a.csv --model m.json  # comment --nope\n" +
		"fedcast privacy epsilon|noise --rounds 75\nbin/fedcast data check --json cases.csv\n```\nand `fedcast study new --links links.csv`\n"
	invs := docInvocations("good.md", good)
	if len(invs) != 4 {
		t.Fatalf("found %d invocations in %q, want 4", len(invs), good)
	}
	for _, inv := range invs {
		if p := checkInvocation(inv); len(p) > 0 {
			t.Errorf("real flags reported: %v", p)
		}
	}
}
