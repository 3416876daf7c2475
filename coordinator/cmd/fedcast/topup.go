package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// runStudyTopUp is 'fedcast study topup': it raises a stopped study's
// lifetime budget in its ledger (docs/deployment.md, "Raising the budget").
func runStudyTopUp(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "study topup", "study topup --state DIR --epsilon NEW [--campaigns K]\n\n"+
		"Raises the lifetime budget of the study whose ledger is in DIR to NEW, adding K campaigns after the planned ones\n"+
		"(same rounds per campaign and timetable). The added rounds' noise is calibrated so that every round, planned and\n"+
		"added, composes to NEW under an RDP privacy filter. Stop 'fedcast serve' first (it refuses while a coordinator\n"+
		"runs on DIR) and start it again afterwards: each LHA receives the top-up when it reconnects, and trains in the added\n"+
		"rounds only if its own limit allows. On Cloudflare Workers the same top-up is POST /api/admin/topup (docs/deploy-cloudflare.md).")
	state := fs.String("state", "", "the coordinator's state directory (holding ledger.db); required")
	eps := fs.Float64("epsilon", 0, "the new lifetime budget ε (above the current one); required")
	campaigns := fs.Int("campaigns", 1, "campaigns to add")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *state == "" || !flagSet(fs, "epsilon") {
		return usagef("e.g. --state study.state --epsilon 3", "--state and --epsilon are required")
	}
	path := filepath.Join(*state, "ledger.db")
	if err := haveLedger(*state); err != nil {
		return err
	}
	lock, err := lockState(*state)
	if err != nil {
		return err
	}
	defer lock.Close()
	l, err := ledger.Open(path)
	if err != nil {
		return err
	}
	defer l.Close()
	g, err := l.Genesis()
	if err != nil {
		return err
	}
	f, err := study.Parse(g.Study)
	if err != nil {
		return fmt.Errorf("study topup: the study file in %s: %w", path, err)
	}
	var opt study.Options
	if g.InsecureSeed {
		var seed uint64 // the mode must match; a top-up draws no randomness
		opt.InsecureSeed = &seed
	}
	e, err := study.Open(f, g.Study, l.Store(), &opt)
	if err != nil {
		return err
	}
	before := e.Study
	t, err := e.TopUp(*eps, *campaigns, time.Now())
	if errors.Is(err, protocol.ErrTopUp) {
		// "fedcast study: study topup: invalid top-up: …" said the
		// command twice and no way out.
		return usagef(fmt.Sprintf("--epsilon is the new lifetime budget of the whole study, above its ε = %g now (e.g. --epsilon %g); --campaigns is how many campaigns to add, at least 1",
			before.Epsilon, before.Epsilon+1), "top-up refused: %s", strings.TrimPrefix(err.Error(), protocol.ErrTopUp.Error()+": "))
	}
	if err != nil {
		return fmt.Errorf("study topup: %w", err)
	}
	fmt.Fprintf(env.Stdout, "Top-up %d recorded in %s: lifetime budget ε %g → %g.\n", t.Number, path, t.FromEpsilon, t.Epsilon)
	if s := weakEpsilon(t.Epsilon); s != "" {
		fmt.Fprintln(env.Stdout, "warning: "+s)
	}
	added := fmt.Sprintf("rounds %d–%d", before.Rounds+1, before.Rounds+t.Rounds)
	if t.Rounds == 1 {
		added = fmt.Sprintf("round %d", before.Rounds+1)
	}
	fmt.Fprintf(env.Stdout, "Added %s of %s (%s, noise multiplier %.6g; the planned rounds keep theirs).\n",
		plural(t.Campaigns, "campaign"), plural(before.CampaignRounds(), "round"), added, t.NoiseMultiplier)
	fmt.Fprintf(env.Stdout, "All %d rounds compose to ε = %g at δ = %g under an RDP privacy filter at order %g.\n", e.Study.Rounds, t.Epsilon, e.Study.Delta, t.Order)
	if plannable(f) {
		a, err := assessAt(f, t.Epsilon, t.NoiseMultiplier)
		if err != nil {
			return fmt.Errorf("study topup: the top-up is recorded, but the planner could not read it: %w", err)
		}
		fmt.Fprintf(env.Stdout, "Planner: with the added rounds' noise (%.3g per LHA) the table expects relative WIS %s against the no-change forecast.\n",
			a.Parameters.NoisePerLHA, a.Expectation())
		for _, s := range a.Warnings {
			fmt.Fprintf(env.Stdout, "warning: the added rounds: %s\n", s)
		}
		fmt.Fprintln(env.Stdout, wisWords)
	}
	fmt.Fprintf(env.Stdout, "Start 'fedcast serve' again, and tell the LHAs: each trains in the added rounds only while its own ε limit allows. "+
		"A page or client that joined before this top-up keeps its limit (by default the budget it joined under, at most ε = %g) "+
		"and sits out the added rounds until the LHA agrees: by opening its join link again, or by restarting 'fedcast client' "+
		"(with --max-epsilon %g if it sets one).\n", before.Epsilon, t.Epsilon)
	return ctx.Err()
}
