package study

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// BenchmarkAggregateRound measures one round of 2,500 updates of the
// paper's model (11,777 float64) through the engine: Begin, 2,500 × Submit
// (re-clip and add), Complete (mean ÷ m, noise, synced SQLite commit). In
// the default (secure) mode updates are added as they arrive; with an
// insecure seed they are buffered and summed in LHA order at Complete. The
// heap-growth metric is the live heap after the Submits minus before
// (runtime.ReadMemStats after a GC): O(model) when streaming, O(clients ×
// model) when buffered.
//
//	go test -run=NONE -bench=AggregateRound -benchtime=5x ./coordinator/study/
func BenchmarkAggregateRound(b *testing.B) {
	const n = 2500
	for _, mode := range []string{"secure", "insecure-seed"} {
		b.Run(fmt.Sprintf("%s/updates=%d", mode, n), func(b *testing.B) {
			f, _, err := Create(CreateOptions{Names: benchNames(n), Template: File{Settings: protocol.Settings{Name: "bench", Epsilon: 10, Rounds: 1000,
				ExpectedClients: n, RoundLength: Duration(time.Minute)}}})
			if err != nil {
				b.Fatal(err)
			}
			raw, _ := f.Marshal()
			l := openLedger(b, filepath.Join(b.TempDir(), "ledger.db"))
			var opt Options
			if mode != "secure" {
				seed := uint64(1)
				opt.InsecureSeed = &seed
			}
			e, err := Open(f, raw, l, &opt)
			if err != nil {
				b.Fatal(err)
			}
			dim := e.Model.NumParams()
			rng := rand.New(rand.NewPCG(1, 1))
			upd := make([]float64, dim)
			for i := range upd {
				upd[i] = rng.NormFloat64() * 0.01
			}
			var ms runtime.MemStats
			var growth float64
			b.ResetTimer()
			for range b.N {
				r, err := e.Begin(nil)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&ms)
				before := ms.HeapAlloc
				b.StartTimer()
				for _, lha := range r.Sampled {
					if err := e.Submit(lha, r.ID, upd); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&ms)
				growth += float64(ms.HeapAlloc) - float64(before)
				b.StartTimer()
				if _, err := commit(e); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(growth/float64(b.N)/(1<<10), "heap-KiB/round")
			b.ReportMetric(float64(8*dim)/(1<<20), "model-MiB")
		})
	}
}

func benchNames(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("LHA %05d", i)
	}
	return s
}
