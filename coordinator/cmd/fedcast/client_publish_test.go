package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/publish"
	"github.com/fedcast/fedcast/shared/series"
)

// checkPublishedHub checks a published hub file written by the client:
// every area of d with its last day as reference date and a 7-day
// horizon, the DP marking beside it, and the marking in the text.
func checkPublishedHub(t *testing.T, path string, d *series.Dataset, text string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no published hub file: %v", err)
	}
	defer f.Close()
	fs, err := forecast.ReadHub(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(d.Regions) {
		t.Fatalf("%d published forecasts, the file has %d areas", len(fs), len(d.Regions))
	}
	for i, fc := range fs {
		if fc.Location != d.Regions[i].Name || !fc.ReferenceDate.Equal(d.Regions[i].End()) || fc.Horizon() != 7 {
			t.Errorf("published %d: %s %s horizon %d", i, fc.Location, fc.ReferenceDate, fc.Horizon())
		}
	}
	b, err := os.ReadFile(strings.TrimSuffix(path, ".csv") + ".dp.json")
	if err != nil {
		t.Fatal(err)
	}
	var mark publish.Marking
	if err := json.Unmarshal(b, &mark); err != nil || !mark.DP || mark.EpsilonPerPersonYear > 1 || mark.EpsilonPerPersonYear < 0.95 {
		t.Errorf("DP marking %s: want differentially private with ε just below 1 (%v)", b, err)
	}
	if !strings.Contains(text, "Published with differential privacy: ε = 0.9") {
		t.Errorf("the text lacks the marking:\n%s", text)
	}
}

// TestClientPublishSameDraw publishes twice from the same file: the second
// time gives the stored numbers, and a changed count does not change them.
func TestClientPublishSameDraw(t *testing.T) {
	dir := t.TempDir()
	data, d := writePublishCases(t, dir, 30, func(i int) int { return 20 + i%5 })
	var runs []string
	for k := range 2 {
		fs := newFlagSet(&Env{Stderr: &bytes.Buffer{}}, "client", "")
		p := addPublishFlags(fs)
		hub := filepath.Join(dir, "f.csv")
		if err := fs.Parse([]string{"--publish-epsilon", "1"}); err != nil {
			t.Fatal(err)
		}
		if k == 1 {
			d.Regions[0].Cases[29] += 50 // the counts changed: still the stored draw
		}
		var out bytes.Buffer
		if err := p.run(&Env{Stdout: &out, Stderr: &bytes.Buffer{}}, d, data, hub, protocol.Study{Settings: protocol.Settings{Epsilon: 2, Features: "log-change"}}, nil, rand.New(rand.NewPCG(uint64(k), 1))); err != nil {
			t.Fatal(err)
		}
		hubText, err := os.ReadFile(filepath.Join(dir, "f-published.csv"))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, string(hubText))
		if k == 0 {
			checkPublishedHub(t, filepath.Join(dir, "f-published.csv"), d, out.String())
			if !strings.Contains(out.String(), "a person's total: the study's ε 2") {
				t.Errorf("no person's total:\n%s", out.String())
			}
		} else if !strings.Contains(out.String(), "published before: the same numbers") {
			t.Errorf("second run did not say it republished:\n%s", out.String())
		}
	}
	if runs[0] != runs[1] {
		t.Errorf("publishing the same day twice gave different files:\n%s\n%s", runs[0], runs[1])
	}
	if _, err := os.Stat(data + ".published.json"); err != nil {
		t.Errorf("no store next to the data file: %v", err)
	}
}

// writePublishCases writes dir/cases.csv, one area's count(i) cases on
// March i+1, 2021 (i < days ≤ 31), and returns its path and dataset.
func writePublishCases(t *testing.T, dir string, days int, count func(int) int) (string, *series.Dataset) {
	t.Helper()
	data := filepath.Join(dir, "cases.csv")
	var b strings.Builder
	b.WriteString("date,region,cases\n")
	for i := range days {
		b.WriteString("2021-03-" + twoDigits(i+1) + ",01001," + strconv.Itoa(count(i)) + "\n")
	}
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := series.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	return data, d
}

func twoDigits(i int) string { return string([]byte{byte('0' + i/10), byte('0' + i%10)}) }

func TestClientPublishFlags(t *testing.T) {
	for _, args := range [][]string{{"--publish-epsilon", "-1"}, {"--publish-epsilon", "1", "--publish-delta", "2"}} {
		all := append([]string{"client", "--join", "http://127.0.0.1:1/join#x", "--data", "x.csv"}, args...)
		if code, _, errs := fedcast(t, all...); code != 2 || !strings.Contains(errs, "--publish-") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
}

// TestClientPublishStudyModel: a study of the Lipschitz design publishes
// with its released model (another median than the public no-change
// model's under the same noise draw) and marks the model's hash; another
// design publishes with the public model and says so.
func TestClientPublishStudyModel(t *testing.T) {
	dir := t.TempDir()
	data, d := writePublishCases(t, dir, 28, func(i int) int { return 10 + 4*i })
	layers := []int{model.LipschitzHistory, 8, 1}
	mlp := nn.NewMLP(layers...)
	released := make([]float64, mlp.NumParams())
	mlp.Init(released, rand.New(rand.NewPCG(4, 5)))
	mlp.ProjectSpectral(released)
	lip := protocol.Study{Layers: layers, Settings: protocol.Settings{Epsilon: 2, Features: "lipschitz", Damping: 0.1}}
	other := protocol.Study{Layers: []int{13, 16, 1}, Settings: protocol.Settings{Epsilon: 2, Features: "log-change", Hidden: []int{16}}}
	medians := map[string]float64{}
	for name, st := range map[string]protocol.Study{"lipschitz": lip, "log-change": other} {
		fs := newFlagSet(&Env{Stderr: &bytes.Buffer{}}, "client", "")
		p := addPublishFlags(fs)
		hub := filepath.Join(dir, name+".csv")
		store := filepath.Join(dir, name+".published.json")
		if err := fs.Parse([]string{"--publish-epsilon", "1", "--publish-store", store}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := p.run(&Env{Stdout: &out, Stderr: &bytes.Buffer{}}, d, data, hub, st, released, rand.New(rand.NewPCG(9, 9))); err != nil {
			t.Fatal(err)
		}
		pub := filepath.Join(dir, name+"-published.csv")
		checkPublishedHub(t, pub, d, out.String())
		mark, err := os.ReadFile(filepath.Join(dir, name+"-published.dp.json"))
		if err != nil {
			t.Fatal(err)
		}
		f, _ := os.Open(pub)
		fcs, err := forecast.ReadHub(f)
		f.Close()
		if err != nil || len(fcs) != 1 {
			t.Fatalf("%s: %d forecasts, %v", name, len(fcs), err)
		}
		medians[name] = fcs[0].Quantiles.Median()
		sha := protocol.HashHex(released)
		if name == "lipschitz" {
			if !strings.Contains(string(mark), `"model_sha256": "`+sha+`"`) || !strings.Contains(out.String(), "the study's released model "+sha[:12]) {
				t.Errorf("a Lipschitz study's publication does not name its model:\n%s\n%s", mark, out.String())
			}
		} else if strings.Contains(string(mark), sha) || !strings.Contains(out.String(), "not Lipschitz-bounded") ||
			!strings.Contains(string(mark), "no change") {
			t.Errorf("another design's publication does not say it used the public model:\n%s\n%s", mark, out.String())
		}
	}
	if math.Abs(medians["lipschitz"]-medians["log-change"]) < 1e-6 {
		t.Errorf("the study model's published median %v is the no-change model's", medians["lipschitz"])
	}
}

// TestPublishFlagMistakes: each mistake with the publish flags is refused
// before anything is forecast, naming the flag and what to do.
func TestPublishFlagMistakes(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		msg, hint string // "" msg: accepted
	}{
		{nil, "", ""},
		{[]string{"--publish-epsilon", "1"}, "", ""},
		{[]string{"--publish-epsilon", "0"}, "--publish-epsilon 0: nothing would be published", "leave out --publish-epsilon"},
		{[]string{"--publish-store", "s.json"}, "--publish-store needs --publish-epsilon", "add --publish-epsilon"},
		{[]string{"--publish-hub", "p.csv"}, "--publish-hub needs --publish-epsilon", "add --publish-epsilon"},
		{[]string{"--publish-delta", "1e-7"}, "--publish-delta needs --publish-epsilon", "add --publish-epsilon"},
		{[]string{"--publish-limit", "1"}, "--publish-limit needs --publish-epsilon", "add --publish-epsilon"},
		{[]string{"--publish-epsilon", "1", "--publish-limit", "0"}, "--publish-limit 0: write a number above 0", "leave it out for no limit"},
		{[]string{"--publish-epsilon", "1e-5"}, "--publish-epsilon 1e-05 is too small", "choose a larger ε"},
		{[]string{"--publish-epsilon", "-1"}, "--publish-epsilon -1: write a number above 0", "--publish-epsilon 1"},
	} {
		fs := newFlagSet(&Env{Stderr: &bytes.Buffer{}}, "forecast", "")
		p := addPublishFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := p.check()
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.args, err)
			}
			continue
		}
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.msg, tc.msg) || !strings.Contains(ue.hint, tc.hint) {
			t.Errorf("%v: got %v (%#v), want %q with hint %q", tc.args, err, ue, tc.msg, tc.hint)
		}
	}
}

// TestPublishStoreMistakes: a store that cannot be this file's is refused
// with the file and what to do: another LHA's store, a damaged one, and a
// default store that does not exist yet beside an earlier week's (the
// earlier publications would not be counted); the right store says how
// many publications it counts, and a redraw at another ε says which ε the
// stored numbers have.
func TestPublishStoreMistakes(t *testing.T) {
	st := protocol.Study{Settings: protocol.Settings{Epsilon: 2, Features: "log-change"}}
	publishOnce := func(dir string, d *series.Dataset, data string, args ...string) (string, string, error) {
		fs := newFlagSet(&Env{Stderr: &bytes.Buffer{}}, "forecast", "")
		p := addPublishFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		var out, errs bytes.Buffer
		err := p.run(&Env{Stdout: &out, Stderr: &errs}, d, data, "", st, nil, rand.New(rand.NewPCG(1, 2)))
		return out.String(), errs.String(), err
	}
	dir := t.TempDir()
	data, d := writePublishCases(t, dir, 21, func(i int) int { return 20 + i%3 })
	if _, _, err := publishOnce(dir, d, data, "--publish-epsilon", "1"); err != nil {
		t.Fatal(err)
	}
	// The next week's file under another name, in the same folder.
	next := filepath.Join(dir, "cases-next.csv")
	b, _ := os.ReadFile(data)
	if err := os.WriteFile(next, b, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"publications":[{"area":"09999","origin":"2021-03-21","median_log":4,"kappa":50,"spread":0.3,"mechanism":{"Gamma":0.001,"Sigma2":100,"Steps":[65,9,6]},"epsilon_per_person_year":1,"delta":1e-6}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		data      string
		args      []string
		msg, hint string // "" msg: accepted, hint then is in the output
	}{
		{"new name beside an earlier store", next, []string{"--publish-epsilon", "1"},
			"cases-next.csv has no store of published forecasts yet", "add --publish-store " + data + ".published.json"},
		{"another LHA's store", data, []string{"--publish-epsilon", "1", "--publish-store", other},
			"holds areas 09999, none of which is in", "give the store of this file's areas"},
		{"damaged store", data, []string{"--publish-epsilon", "1", "--publish-store", data},
			"--publish-store " + data + ": the file of published forecasts is damaged", "restore it from a backup"},
		{"the earlier store", next, []string{"--publish-epsilon", "1", "--publish-store", data + ".published.json"},
			"", "1 publication so far, all counted"},
		{"a new store on purpose", next, []string{"--publish-epsilon", "1", "--publish-store", filepath.Join(dir, "new.json")},
			"", "(new: no earlier publications)"},
		{"the same day at another ε", data, []string{"--publish-epsilon", "2"},
			"", "published before, at ε 1: the same numbers; --publish-epsilon 2 applies to days not published yet"},
	} {
		out, errs, err := publishOnce(dir, d, tc.data, tc.args...)
		if tc.msg == "" {
			if err != nil || !strings.Contains(out+errs, tc.hint) {
				t.Errorf("%s: %v; want %q in\n%s%s", tc.name, err, tc.hint, out, errs)
			}
			continue
		}
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.msg, tc.msg) || !strings.Contains(ue.hint, tc.hint) {
			t.Errorf("%s: got %v (%#v), want %q with hint %q", tc.name, err, ue, tc.msg, tc.hint)
		}
	}
}

// TestPublishWeakEpsilon: an ε per person per year above 10 publishes
// with a warning, as study new warns for a lifetime ε.
func TestPublishWeakEpsilon(t *testing.T) {
	for _, tc := range []struct {
		eps  float64
		warn bool
	}{{1, false}, {10, false}, {11, true}, {1e9, true}} {
		if got := weakPublishEpsilon(tc.eps) != ""; got != tc.warn {
			t.Errorf("ε %g: warning %v, want %v", tc.eps, got, tc.warn)
		}
	}
}

// TestPublishLimit: with --publish-limit, weekly publications at ε 1 stay
// within a yearly limit of 1 week after week, and a later week that would
// exceed it publishes nothing and leaves the store as it was.
func TestPublishLimit(t *testing.T) {
	dir := t.TempDir()
	st := protocol.Study{Settings: protocol.Settings{Epsilon: 2, Features: "log-change"}}
	for _, tc := range []struct {
		days int // the file ends on March days, 2021: one week later each time
		eps  string
		want string // in the error ("" none) or else in the output
		err  bool
	}{
		{14, "1", "of your yearly limit 1", false},
		{21, "1", "of your yearly limit 1", false},
		{28, "1", "of your yearly limit 1", false},
		{31, "2", "above your --publish-limit 1: nothing was published", true},
	} {
		data, d := writePublishCases(t, dir, tc.days, func(i int) int { return 30 + i%4 })
		before, _ := os.ReadFile(data + ".published.json")
		fs := newFlagSet(&Env{Stderr: &bytes.Buffer{}}, "forecast", "")
		p := addPublishFlags(fs)
		if err := fs.Parse([]string{"--publish-epsilon", tc.eps, "--publish-limit", "1"}); err != nil {
			t.Fatal(err)
		}
		if err := p.check(); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err := p.run(&Env{Stdout: &out, Stderr: &bytes.Buffer{}}, d, data, "", st, nil, rand.New(rand.NewPCG(uint64(tc.days), 3)))
		after, _ := os.ReadFile(data + ".published.json")
		switch {
		case tc.err && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("day %d at ε %s: %v, want %q", tc.days, tc.eps, err, tc.want)
		case tc.err && !bytes.Equal(before, after):
			t.Errorf("day %d: refused, but the store changed", tc.days)
		case !tc.err && (err != nil || !strings.Contains(out.String(), tc.want)):
			t.Errorf("day %d at ε %s: %v, want %q in\n%s", tc.days, tc.eps, err, tc.want, out.String())
		}
	}
}

// TestPublishShortFile: an area with fewer days than the forecast to
// publish reads is named, with how many days it has.
func TestPublishShortFile(t *testing.T) {
	for _, tc := range []struct {
		days int
		want string // "": no note
	}{
		{21, ""},
		{28, ""},
		{10, "note: 01001 has 10 days, fewer than the 21 days the forecast to publish reads"},
		{1, "note: 01001 has 1 day, fewer than the 21 days"},
	} {
		dir := t.TempDir()
		data, d := writePublishCases(t, dir, tc.days, func(int) int { return 3 })
		fs := newFlagSet(&Env{Stderr: &bytes.Buffer{}}, "forecast", "")
		p := addPublishFlags(fs)
		if err := fs.Parse([]string{"--publish-epsilon", "1"}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		st := protocol.Study{Settings: protocol.Settings{Epsilon: 2, Features: "log-change"}}
		if err := p.run(&Env{Stdout: &out, Stderr: &bytes.Buffer{}}, d, data, "", st, nil, rand.New(rand.NewPCG(1, 1))); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "fewer than the"); got != (tc.want != "") || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%d days: want %q in\n%s", tc.days, tc.want, out.String())
		}
	}
}
