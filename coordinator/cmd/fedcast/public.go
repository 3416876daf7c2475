package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/forecast"
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
		if err := checkPublicFile(*path); err != nil {
			return err
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

// checkPublicFile reads the file at path as every LHA will
// (forecast.ReadPublicFile), so that a study never declares a public file
// its LHAs cannot read: a case file given by mistake is refused, naming
// the line and the field.
func checkPublicFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("public totals: %w", err)
	}
	if _, err := forecast.ReadPublicFile(bytes.NewReader(b), path); err != nil {
		hint := "write it with 'fedcast data public --cases FILE --counties FILE --out public.csv' (docs/deployment.md, \"The public inputs file\")"
		if bytes.HasPrefix(b, []byte("\uFEFF")) {
			hint = "the file begins with a byte-order mark (a spreadsheet's \"CSV UTF-8\"), which the LHAs do not read: save it as plain CSV, or " + hint
		}
		return usagef(hint, "--public: %s; every LHA reads this file, so the study is not created", forPeople(err.Error()))
	}
	return nil
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
// taken from any LHA's data) and checks the totals file against the
// declared SHA-256: this LHA's copy with --public FILE, or else the one
// the coordinator at base (http://HOST:PORT; "": none) serves.
func checkPublicInputs(ctx context.Context, env *Env, st protocol.Study, path, base string) error {
	_, err := publicTotals(ctx, env, st, path, base)
	return err
}

// loadPublic is checkPublicInputs that also reads the checked totals file
// (forecast.ReadPublicFile): nil when the study declares none or none was
// fetched.
func loadPublic(ctx context.Context, env *Env, st protocol.Study, path, base string) (*forecast.PublicInputs, error) {
	b, err := publicTotals(ctx, env, st, path, base)
	if err != nil || b == nil {
		return nil, err
	}
	name := path
	if name == "" {
		name = "the coordinator's public inputs file"
	}
	return forecast.ReadPublicFile(bytes.NewReader(b), name)
}

// publicTotals returns the checked bytes of the declared totals file (nil
// when none is declared, or none given and base is "").
func publicTotals(ctx context.Context, env *Env, st protocol.Study, path, base string) ([]byte, error) {
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
		if totals != nil && base != "" {
			b, err := fetchPublic(ctx, base, *totals)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(env.Stderr, "public input %s: downloaded from the coordinator (%d bytes), SHA-256 checked\n", totals.Name, len(b))
			return b, nil
		}
		return nil, nil
	}
	if totals == nil {
		return nil, usagef("leave out --public", "--public %s: this study declares no public file", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := totals.Check(b); err != nil {
		return nil, fmt.Errorf("--public %s: %w", path, err)
	}
	fmt.Fprintf(env.Stderr, "public input %s: %s has the declared SHA-256\n", totals.Name, path)
	return b, nil
}

// fetchPublic downloads the declared public file from the coordinator at
// base and checks it against its declaration.
func fetchPublic(ctx context.Context, base string, p protocol.PublicInput) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/api/public/"+p.SHA256, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("public input %s: %w", p.Name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, p.Bytes+1))
	if err != nil {
		return nil, fmt.Errorf("public input %s: %w", p.Name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("public input %s: the coordinator answered %s", p.Name, resp.Status)
	}
	if err := p.Check(b); err != nil {
		return nil, fmt.Errorf("the coordinator's copy: %w", err)
	}
	return b, nil
}

// coordinatorBase returns http(s)://HOST of a join link ("" when it has
// none).
func coordinatorBase(link string) string {
	u, err := url.Parse(link)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
