package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// publicFlags adds 'study new --public FILE [--public-source TEXT]' to fs
// and returns what declares them in a study file: the public totals file
// (hashed now; serve serves it at /api/public/SHA256) and the holiday
// calendar built into fedcast (docs/deployment.md, "Public inputs").
func publicFlags(env *Env, fs *flag.FlagSet) func(f *study.File) error {
	path := fs.String("public", "", "declare this public file of national and state daily case totals as the study's public input (its SHA-256 goes into the study file; serve serves it to the LHAs), with the holiday calendar built into fedcast")
	source := fs.String("public-source", "", "where the --public file comes from, shown to every LHA (publisher, URL, date)")
	return func(f *study.File) error {
		if *path == "" {
			if *source != "" {
				return usagef("e.g. --public totals.csv --public-source \"RKI, 2026-11-27\"", "--public-source needs --public")
			}
			return nil
		}
		if err := f.DeclarePublic(*path, *source, holidaySource()); err != nil {
			return err
		}
		for _, p := range f.PublicInputs {
			if p.SHA256 != "" {
				fmt.Fprintf(env.Stdout, "Public input %s: %s (%d bytes, SHA-256 %s); every LHA checks this hash\n", p.Name, p.Source, p.Bytes, p.SHA256)
			} else {
				fmt.Fprintf(env.Stdout, "Public input %s: %s\n", p.Name, p.Source)
			}
		}
		return nil
	}
}

// holidaySource names the holiday calendar built into this binary.
func holidaySource() string {
	const mod = "github.com/rickar/cal/v2"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == mod {
				return "public holidays by state from " + mod + " " + d.Version + ", built into fedcast"
			}
		}
	}
	return "public holidays by state from " + mod + ", built into fedcast"
}

// checkPublicInputs prints the study's public inputs as public (never
// taken from any LHA's data) and, with --public FILE, checks this LHA's
// copy of the totals file against the declared SHA-256.
func checkPublicInputs(env *Env, st protocol.Study, path string) error {
	var totals *protocol.PublicInput
	for i, p := range st.PublicInputs {
		fmt.Fprintf(env.Stderr, "public input %s (public data, not from any LHA): %s", p.Name, p.Source)
		if p.SHA256 != "" {
			fmt.Fprintf(env.Stderr, ", SHA-256 %s", p.SHA256)
			totals = &st.PublicInputs[i]
		}
		fmt.Fprintln(env.Stderr)
	}
	if path == "" {
		return nil
	}
	if totals == nil {
		return usagef("leave out --public", "--public %s: this study declares no public file", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := totals.Check(b); err != nil {
		return fmt.Errorf("--public %s: %w", path, err)
	}
	fmt.Fprintf(env.Stderr, "public input %s: %s has the declared SHA-256\n", totals.Name, path)
	return nil
}
