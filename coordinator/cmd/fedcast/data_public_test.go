package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/forecast"
)

func TestDataPublic(t *testing.T) {
	dir := t.TempDir()
	cases, pops, out := filepath.Join(dir, "cases.csv"), filepath.Join(dir, "pops.csv"), filepath.Join(dir, "public.csv")
	if code, _, errs := fedcast(t, "data", "synth", "--areas", "4", "--days", "60", "--out", cases, "--populations", pops); code != 0 {
		t.Fatal(errs)
	}
	code, stdout, errs := fedcast(t, "data", "public", "--cases", cases, "--counties", pops, "--out", out)
	if code != 0 || !strings.Contains(stdout, "4 areas") {
		t.Fatalf("code %d: %s %s", code, stdout, errs)
	}
	// Published totals: readable by others (the study file stays 0600).
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm()&0o044 != 0o044 {
		t.Errorf("the public inputs file's mode: %v (%v), want readable by all", fi.Mode(), err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := forecast.ReadPublicFile(f, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.National) != 60 || len(p.AreaState) != 4 {
		t.Fatalf("%d days, %d areas", len(p.National), len(p.AreaState))
	}
	if code, _, errs := fedcast(t, "data", "public", "--cases", cases, "--counties", pops, "--out", out); code != 2 || !strings.Contains(errs, "never overwritten") {
		t.Fatalf("second write: code %d, %s", code, errs)
	}
	if code, _, errs := fedcast(t, "data", "public", "--cases", cases); code != 2 || !strings.Contains(errs, "required") {
		t.Fatalf("missing flags: code %d, %s", code, errs)
	}
}
