package protocol

import "time"

// The coordinator's HTTP status answers, shared by the server that writes
// them and the browser dashboard that reads them.

// Status is the public GET /api/status answer. Nothing in it depends on
// which LHAs take part (spec §5: the sampled set stays secret), not even
// when it changes: it is a snapshot taken at schedule ticks.
type Status struct {
	// Round is the number of rounds committed, Rounds T; in a cyclic
	// study both count turns (T·N in all; see Turn).
	Round  int `json:"round"`
	Rounds int `json:"rounds"`
	// Campaigns is the number of campaigns of a continuing study (absent:
	// one); Rounds then counts every round of every campaign and
	// EpsilonSpent and EpsilonBudget are lifetime figures.
	Campaigns    int     `json:"campaigns,omitempty"`
	EpsilonSpent float64 `json:"epsilon_spent"`
	// EpsilonPublic, in a study with a helper (SecureAggregation), is ε
	// against the public after the released rounds (√2 times the noise,
	// argued); EpsilonSpent is then each server's.
	SecureAggregation bool    `json:"secure_aggregation,omitempty"`
	EpsilonPublic     float64 `json:"epsilon_public,omitempty"`
	EpsilonBudget     float64 `json:"epsilon_budget"`
	Delta             float64 `json:"delta"`
	NoiseMultiplier   float64 `json:"noise_multiplier"`
	// Guarantee is the study's privacy level ("client", "example" or
	// "both"; empty from coordinators that predate it: "client"). Under
	// "example" EpsilonSpent, EpsilonBudget and NoiseMultiplier are 0:
	// there is no client-level guarantee, the coordinator sees every
	// sampled LHA's update un-noised, and each LHA's own example-level
	// budget (ExampleEpsilon at ExampleDelta) protects each of its
	// training windows.
	Guarantee       string  `json:"guarantee,omitempty"`
	ExampleEpsilon  float64 `json:"example_epsilon,omitempty"`
	ExampleDelta    float64 `json:"example_delta,omitempty"`
	State           string  `json:"state"` // waiting, running or finished
	InsecureSeed    bool    `json:"insecure_seed"`
	Name            string  `json:"name"`
	Clients         int     `json:"clients"`
	ExpectedClients int     `json:"expected_clients"`
	SampleRate      float64 `json:"sample_rate"`
	Protocol        int     `json:"protocol"`
	FinishReason    string  `json:"finish_reason,omitempty"`
	// StudyID is the study hash (Study.ID): the study's identity,
	// the same every LHA computes from the study of its welcome. It
	// changes only with a top-up (the study value then changes).
	StudyID string `json:"study_id,omitempty"`
	// Schedule is the public round schedule.
	Schedule *Schedule `json:"schedule,omitempty"`
	// AsOf is the schedule tick this status was taken at: the coordinator
	// serves a snapshot that changes only at schedule ticks.
	AsOf *time.Time `json:"as_of,omitempty"`
	// Turn says whose turn it is while a turn of a cyclic study is open
	// (nil otherwise). It is public anyway: the order of every round is
	// fixed by the study file before the study starts.
	Turn *Turn `json:"turn,omitempty"`
}

// Turn is the open turn of a cyclic study: Schedule.Round is its number
// over the study (1 … T·N); Round is the FL round (1 … T), Position its
// place in that round's public order (1 … N), LHA the name of the LHA
// whose turn it is.
type Turn struct {
	Round    int    `json:"round"`
	Position int    `json:"position"`
	LHA      string `json:"lha"`
}

// AdminStatus is the admin-only GET /api/admin/status answer: the public
// status plus who is connected, the open round and each committed round's
// participation.
type AdminStatus struct {
	Status
	Enrolled int `json:"enrolled"`
	Online   int `json:"online"`
	// Ready counts the LHAs online whose file is checked and who joined:
	// the ones the start quorum and the rounds count.
	Ready         int             `json:"ready"`
	LHAs          []AdminLHA      `json:"lhas"`
	OpenRound     *AdminRound     `json:"open_round"`
	Participation []Participation `json:"participation"`
}

// AdminLHA is one enrolled LHA's connection state.
type AdminLHA struct {
	Name        string     `json:"name"`
	Online      bool       `json:"online"`
	OnlineSince *time.Time `json:"online_since,omitempty"`
}

// AdminRound is the round in progress.
type AdminRound struct {
	Round    int       `json:"round"`
	Sampled  []string  `json:"sampled"`
	Online   int       `json:"online"`
	Received int       `json:"received"`
	Rejected int       `json:"rejected"`
	Started  time.Time `json:"started"`
}

// Participation is the admin-only record of one committed round: how many
// LHAs were sampled, online, answered and were rejected, and how long the
// round took (Duration in JSON: nanoseconds).
type Participation struct {
	Round    int           `json:"round"`
	Sampled  int           `json:"sampled"`
	Online   int           `json:"online"` // sampled LHAs connected when the round started
	Received int           `json:"received"`
	Rejected int           `json:"rejected"`
	Duration time.Duration `json:"duration"`
}
