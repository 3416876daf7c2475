package protocol

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/secagg"
)

func hashStudy() Study {
	return Study{Protocol: 3, Clients: 3,
		SampleRate: 1, NoiseMultiplier: 1.234567,
		Layers: []int{13, 16, 1}, Params: 241,
		Helper: &Helper{URL: "https://helper.example.org", PublicKey: []byte{1, 2, 3}, Operator: "Helper e.V."},
		Settings: Settings{Name: "Kreis <A> & B", Epsilon: 1, Delta: 1e-5, Rounds: 5, ExpectedClients: 3,
			ClipNorm: 0.5, LocalEpochs: 30, LearningRate: 0.001,
			History: 13, Horizon: 7, Smoothing: "centered", TrainFraction: 0.9,
			RoundLength: Duration(90000 * time.Millisecond), RoundSlack: Duration(9000 * time.Millisecond),
			Hidden: []int{16}}}
}

func TestStudyCanonicalJSON(t *testing.T) {
	s := hashStudy()
	c, err := s.CanonicalJSON()
	if err != nil {
		t.Fatal(err)
	}
	got := string(c)
	for _, w := range []string{
		`{"clients":3,"clip_norm":0.5,"delta":0.00001,`, // keys sorted, short numbers
		`"helper":{"operator":"Helper e.V.","public_key":"AQID","url":"https://helper.example.org"}`,
		`"name":"Kreis <A> & B"`, // no HTML escaping
		`"learning_rate":0.001,`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("canonical JSON lacks %s:\n%s", w, got)
		}
	}
	if strings.Contains(got, "\n") || strings.Contains(got, `": `) || strings.Contains(got, `, "`) {
		t.Errorf("canonical JSON has whitespace: %s", got)
	}
}

// The study hash is pinned: a change of the canonical encoding changes
// every LHA's associated data and must be deliberate (docs/study-file.md).
func TestStudyHashPinned(t *testing.T) {
	s := hashStudy()
	h, err := s.Hash()
	if err != nil {
		t.Fatal(err)
	}
	const want = "8f966cdff794dea2e9794ddc5a7bd58f39fc7992c034e27aae6d5e5345064f0e"
	if got := hex.EncodeToString(h[:]); got != want {
		t.Errorf("study hash %s, want %s", got, want)
	}
}

func TestStudyHashCoversEveryParameter(t *testing.T) {
	base := hashStudy()
	h0, _ := base.Hash()
	for name, f := range map[string]func(*Study){
		"noise multiplier": func(s *Study) { s.NoiseMultiplier = 1.2345670000000001 * 1.0000001 },
		"clip norm":        func(s *Study) { s.ClipNorm = 0.25 },
		"rounds":           func(s *Study) { s.Rounds = 6 },
		"epsilon":          func(s *Study) { s.Epsilon = 2 },
		"clients":          func(s *Study) { s.Clients = 4 },
		"helper key":       func(s *Study) { s.Helper.PublicKey = []byte{1, 2, 4} },
		"leader token":     func(s *Study) { s.Helper.LeaderTokenSHA256 = "00" },
		"no helper":        func(s *Study) { s.Helper = nil },
		"layers":           func(s *Study) { s.Layers = []int{13, 17, 1} },
	} {
		s := hashStudy()
		f(&s)
		if h, _ := s.Hash(); h == h0 {
			t.Errorf("changing the %s leaves the hash unchanged", name)
		}
	}
	if h, _ := base.Hash(); h != h0 {
		t.Error("the hash is not deterministic")
	}
}

func TestCheckSecureAggregation(t *testing.T) {
	key, _ := secagg.GenerateKey()
	ok := hashStudy()
	ok.Helper.PublicKey = key.PublicKey().Bytes()
	if err := ok.CheckSecureAggregation(); err != nil {
		t.Fatalf("a FedAvg study: %v", err)
	}
	for _, c := range []struct {
		name  string
		edit  func(*Study)
		words string
	}{
		{"no helper", func(s *Study) { s.Helper = nil }, "no helper"},
		{"bad key", func(s *Study) { s.Helper = &Helper{PublicKey: []byte{1}} }, "not an X25519 public key"},
		{"cyclic", func(s *Study) { s.Strategy = "cyclic" }, `strategy "cyclic" cannot use a helper`},
		{"example", func(s *Study) { s.Privacy = "example" }, "needs client-level noise from both servers"},
		{"wrap", func(s *Study) { s.Clients = 1 << 50 }, "could wrap around"},
		{"wrap in a schedule", func(s *Study) { s.Clients = 1 << 40; s.NoiseMultipliers = []float64{4, 1.0 / 1024} }, "could wrap around"},
	} {
		s := ok
		h := *ok.Helper
		s.Helper = &h
		c.edit(&s)
		if err := s.CheckSecureAggregation(); err == nil || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%s: %v, want %q", c.name, err, c.words)
		}
	}
	mr := ok
	mr.Strategy, mr.Privacy = "mrmtl", "both"
	if err := mr.CheckSecureAggregation(); err != nil {
		t.Errorf("MR-MTL with local DP-SGD: %v", err)
	}
}
