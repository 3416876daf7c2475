package object

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// BenchmarkRound measures the CPU a Durable Object spends on one round of
// the paper's model (11 777 weights) with n LHAs all answering: taking the
// n update frames (each acknowledged at once) and the alarm that closes
// the window (decode, re-clip, sum, noise, commit, state encoding). Run it
// natively or under node (GOOS=js GOARCH=wasm) for the worker's figure.
func BenchmarkRound(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("lhas=%d", n), func(b *testing.B) {
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("LHA %d", i)
			}
			f, sec, err := study.Create(study.CreateOptions{Names: names, Template: study.File{Settings: protocol.Settings{Epsilon: 1000, Rounds: 1 << 20,
				ExpectedClients: n, Hidden: []int{128, 64, 32}, RoundLength: study.Duration(time.Minute)}}})
			if err != nil {
				b.Fatal(err)
			}
			raw, err := f.Marshal()
			if err != nil {
				b.Fatal(err)
			}
			o, _, err := New(raw, nil, nil, t0)
			if err != nil {
				b.Fatal(err)
			}
			for i, tok := range sec.LHAs {
				if _, err := o.Connect(i, protocol.Subprotocols(tok), "", t0); err != nil {
					b.Fatal(err)
				}
				o.Message(i, false, []byte(`{"v":1,"type":"ready"}`), t0)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			u := make([]float64, len(o.eng.Global()))
			for j := range u {
				u[j] = (rng.Float64() - 0.5) * 1e-3
			}
			now := t0
			b.ResetTimer()
			for r := range b.N {
				_, ub, err := protocol.Encode(&protocol.Update{Round: r + 1, Weights: u})
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					o.Message(i, true, ub, now)
				}
				now = now.Add(time.Minute - time.Duration(f.RoundSlack))
				fx := o.Alarm(now) // close: aggregate, noise, commit
				if fx.State == nil {
					b.Fatal("round not committed")
				}
				now = now.Add(time.Duration(f.RoundSlack))
				o.Alarm(now) // release, open the next round
			}
		})
	}
}
