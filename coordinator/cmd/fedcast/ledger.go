package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

func init() {
	register(&command{
		Name:    "ledger",
		Summary: "export a study's privacy ledger as JSON ('ledger export')",
		Run:     runLedger,
	})
}

func runLedger(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] != "export" {
		return usagef("run 'fedcast ledger export -h'", "unknown or missing subcommand (want 'ledger export')")
	}
	fs := newFlagSet(env, "ledger export", "ledger export --state DIR [--study HASH] [--out FILE] [--model FILE]")
	state := fs.String("state", "", "the coordinator's state directory (holding ledger.db), or a helper's; required")
	studyHash := fs.String("study", "", "with a helper's state directory: the study hash (needed when it holds several studies)")
	out := fs.String("out", "", "write the JSON here (default: stdout)")
	modelOut := fs.String("model", "", "also write the last committed model as JSON here")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *state == "" {
		return usagef("e.g. --state study.state", "--state is required")
	}
	path := filepath.Join(*state, "ledger.db")
	hs, _ := helper.Studies(*state)
	if len(hs) == 0 && *studyHash != "" && haveLedger(*state) == nil {
		// It said "helper: no ledger of study … in DIR" of a coordinator's
		// ledger that is there.
		return usagef("leave out --study: a coordinator's state directory holds the ledger of one study",
			"--study picks a study in a helper's state directory; %s is a coordinator's", *state)
	}
	if len(hs) > 0 || *studyHash != "" {
		// A helper's state directory: one ledger per study hash.
		e, err := helper.ExportLedger(*state, *studyHash)
		if err != nil {
			return err
		}
		return writeJSONFile(env, *out, e)
	}
	if err := haveLedger(*state); err != nil {
		return err
	}
	l, err := ledger.Open(path)
	if err != nil {
		return err
	}
	defer l.Close()
	e, err := l.Export(ctx)
	if err != nil {
		return err
	}
	if err := writeJSONFile(env, *out, e); err != nil {
		return err
	}
	if *modelOut != "" {
		last := len(e.Rounds)
		w, err := l.Model(last)
		if err != nil {
			return err
		}
		var layers []int // how to read the weights: the study file's network
		if f, err := study.Parse(e.Study); err == nil {
			layers = f.Layers()
		}
		m := protocol.NewModel(last, e.Finished != nil, layers, w)
		if err := writeJSONFile(env, *modelOut, m); err != nil {
			return err
		}
	}
	return nil
}

func writeJSONFile(env *Env, path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "" || path == "-" {
		_, err = env.Stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// haveLedger refuses a state directory that holds no ledger.db, saying
// which directory is meant: the one 'fedcast serve' names when it starts.
func haveLedger(state string) error {
	if fi, err := os.Stat(state); err == nil && !fi.IsDir() {
		return usagef("e.g. --state "+strings.TrimSuffix(state, filepath.Ext(state))+".state",
			"--state %s is a file: give the study's state directory, which holds ledger.db", state)
	}
	path := filepath.Join(state, "ledger.db")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return usagef("give the state directory 'fedcast serve' printed when it started (\"state DIR\"): by default the study file's name without .json, plus .state",
		"no study ledger in %s (%s does not exist)", state, path)
}
