package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/fedcast/fedcast/shared/synth"
)

// TestFloodLockOut: 50 source addresses (127.0.0.2 … 127.0.0.51, each
// flooder's dialer bound to its own) open websocket handshakes at full
// speed, with guessed tokens or none, while 20 LHAs join and train. Every
// LHA joins, answers every round and receives every release, every
// picked LHA's update is counted, and the coordinator's memory stays
// bounded: no connection of a flooder outlives its answer, and the
// failed-attempt counts hold one entry per address. The flood is bounded
// in count (per flooder) and in time (it stops with the study).
func TestFloodLockOut(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood of a few seconds")
	}
	const lhas, flooders, rounds, perFlooder = 20, 50, 3, 3000
	L := 1500 * time.Millisecond
	seed := uint64(7)
	f := start(t, study.File{Settings: protocol.Settings{Name: "flood", Epsilon: 100, Rounds: rounds, ExpectedClients: 10, Hidden: []int{4},
		LocalEpochs: 5, RoundLength: study.Duration(L), RoundSlack: study.Duration(L / 5)}}, lhaNames(lhas), &seed)
	data, _, err := synth.Generate(synth.Options{Areas: lhas, Seed: 5, Days: 61})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	stop := make(chan struct{})
	var attempts, tooMany atomic.Int64
	var fwg sync.WaitGroup
	for j := range flooders {
		fwg.Add(1)
		go func() {
			defer fwg.Done()
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+j))}}
			hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
			for k := range perFlooder {
				select {
				case <-stop:
					return
				default:
				}
				opt := &websocket.DialOptions{HTTPClient: hc}
				if k%4 != 0 { // most guess a token; some send none (an old client's way)
					opt.Subprotocols = protocol.Subprotocols(fmt.Sprintf("guess-%d-%d", j, k))
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				ws, resp, err := websocket.Dial(ctx, f.wsURL(), opt)
				cancel()
				attempts.Add(1)
				if err == nil {
					ws.CloseNow()
				} else if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
					tooMany.Add(1)
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // the flood is on before the LHAs come

	var peak atomic.Uint64
	sampling := make(chan struct{})
	go func() {
		defer close(sampling)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()

	answered := make([]map[int]bool, lhas)
	results := make([]map[int]bool, lhas)
	errs := make([]error, lhas)
	var wg sync.WaitGroup
	for i := range lhas {
		answered[i], results[i] = map[int]bool{}, map[int]bool{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sess, err := lhaconn.Join(ctx, f.http.URL+"/join#"+f.secrets.LHAs[i], "", nil)
			if err != nil {
				errs[i] = fmt.Errorf("join: %w", err)
				return
			}
			one := &series.Dataset{Regions: []*series.Region{data.Regions[i]}}
			errs[i] = sess.Run(ctx, one, session.Observer{
				Sent:   func(o session.Outgoing) { answered[i][o.Round] = o.Type == "update" || o.Type == "dummy" },
				Result: func(r session.Result) { results[i][r.Round] = true },
			})
		}()
	}
	wg.Wait()
	close(stop)
	fwg.Wait()
	<-sampling

	for i := range lhas {
		if errs[i] != nil {
			t.Fatalf("LHA %d: %v", i, errs[i])
		}
		for k := 1; k <= rounds; k++ {
			if !answered[i][k] || !results[i][k] {
				t.Errorf("LHA %d, round %d: answered %v, released to it %v", i, k, answered[i][k], results[i][k])
			}
		}
	}
	parts, err := f.srv.ledger.Participation()
	if err != nil || len(parts) != rounds {
		t.Fatalf("participation: %d rounds, %v", len(parts), err)
	}
	for _, p := range parts {
		if p.Received != p.Sampled || p.Online != p.Sampled {
			t.Errorf("round %d: %d picked, %d of them online, %d updates counted: an LHA was kept out", p.Round, p.Sampled, p.Online, p.Received)
		}
	}
	n, limited := attempts.Load(), tooMany.Load()
	growth := int64(peak.Load()) - int64(before.HeapInuse)
	t.Logf("flood: %d handshakes from %d addresses, %d answered HTTP 429; heap in use %.1f MB before, peak %.1f MB (all of the test's process); %d addresses counted",
		n, flooders, limited, float64(before.HeapInuse)/(1<<20), float64(peak.Load())/(1<<20), f.srv.fails.Tracked())
	if n < 10*flooders || limited == 0 {
		t.Errorf("the flood was %d handshakes, %d of them limited: not a flood", n, limited)
	}
	if tr := f.srv.fails.Tracked(); tr > flooders {
		t.Errorf("%d addresses counted, want at most the %d flooders", tr, flooders)
	}
	if growth > 64<<20 {
		t.Errorf("heap in use grew by %.1f MB during the flood", float64(growth)/(1<<20))
	}
	if on := f.srv.co.Status(); on.State != protocol.StateFinished {
		t.Errorf("state %s after the study", on.State)
	}
}
