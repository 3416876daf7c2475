package study_test

import (
	"fmt"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// everyone is a Transport with every LHA connected that counts what it
// would send.
type everyone struct {
	n    int
	sent map[string]int
}

func (t *everyone) Send(lha int, k protocol.Kind, b []byte) { t.count(k, b) }
func (t *everyone) Broadcast(k protocol.Kind, b []byte) {
	for range t.n {
		t.count(k, b)
	}
}
func (t *everyone) Drop(int, string) {}
func (t *everyone) Online(int) bool  { return true }
func (t *everyone) Connected() int   { return t.n }
func (t *everyone) count(k protocol.Kind, b []byte) {
	m, _ := protocol.Decode(k, b)
	t.sent[m.Type().String()]++
}

// A driver's whole loop: tick at the times the Coordinator asks for. Here
// nobody sends an update, so each round releases pure noise; the store
// holds every round before its release, and its state round-trips as
// bytes (what a Durable Object keeps in its storage).
func Example() {
	f, _, err := study.Create(study.CreateOptions{Names: []string{"A", "B", "C", "D"}, Template: study.File{
		Settings: protocol.Settings{Name: "example", Epsilon: 3, Rounds: 3, ExpectedClients: 2, History: 4, Horizon: 2, Hidden: []int{4},
			RoundLength: study.Duration(time.Minute)}}})
	if err != nil {
		panic(err)
	}
	raw, _ := f.Marshal()
	seed := uint64(1) // research mode: reproducible (never for a release)
	store := &study.MemStore{}
	e, err := study.Open(f, raw, store, &study.Options{InsecureSeed: &seed})
	if err != nil {
		panic(err)
	}
	tr := &everyone{n: 4, sent: map[string]int{}}
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	c, err := study.NewCoordinator(e, study.DriverOptions{Transport: tr}, now)
	if err != nil {
		panic(err)
	}
	for {
		next, err := c.Tick(now)
		if err != nil {
			panic(err)
		}
		if next.Finished {
			break
		}
		now = next.At
	}
	b, _ := store.S.MarshalBinary()
	var back study.State
	if err := back.UnmarshalBinary(b); err != nil {
		panic(err)
	}
	fmt.Println("rounds stored:", back.Rounds(), "finished:", back.Finished)
	fmt.Println("status:", c.Status().State, "round", c.Status().Round)
	fmt.Println("round results sent:", tr.sent["round_result"], "finished sent:", tr.sent["finished"])
	// Output:
	// rounds stored: 3 finished: rounds
	// status: finished round 3
	// round results sent: 12 finished sent: 4
}
