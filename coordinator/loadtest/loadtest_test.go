package main

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestRunSmall runs the load tool end to end on 50 clients: all of them
// held online at once, every sampled client's update aggregated, every
// round result delivered, the coordinator's memory read.
func TestRunSmall(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fedcast")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/fedcast/fedcast/coordinator/cmd/fedcast").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Fedcast: bin, Clients: 50, Expected: 10, Rounds: 2, Epsilon: 2, InsecureSeed: -1,
		RoundLength: 5 * time.Second, DialConcurrency: 8, Sources: 4, Hold: 300 * time.Millisecond}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.MaxOnline != 50 || res.ClientErrors != 0 {
		t.Fatalf("held %d of 50 online, %d client errors (%s)", res.MaxOnline, res.ClientErrors, res.FirstClientError)
	}
	if len(res.RoundSeconds) != 2 || res.ResultsReceived != 2*51 {
		t.Fatalf("%d rounds, %d results delivered; want 2 and %d", len(res.RoundSeconds), res.ResultsReceived, 2*51)
	}
	received := 0
	for _, r := range res.Received {
		received += r
	}
	if int64(received) != res.UpdatesSent || received == 0 {
		t.Errorf("%d updates sent, %d aggregated", res.UpdatesSent, received)
	}
	// Every client answers every round: the unpicked with a dummy.
	if res.UpdatesSent+res.DummiesSent != 2*51 {
		t.Errorf("%d updates and %d dummies sent, want %d answers", res.UpdatesSent, res.DummiesSent, 2*51)
	}
	if !(res.ServerRSSOnline > 0 && res.ServerHWM >= res.ServerRSSOnline) {
		t.Errorf("memory readings: connected %v MiB, peak %v MiB", res.ServerRSSOnline, res.ServerHWM)
	}
	if res.Params != 11777 || res.UpdateBytes != 48+len(`{"dummy":0}`)+8*11777 {
		t.Errorf("params %d, update frame %d bytes", res.Params, res.UpdateBytes)
	}
}
