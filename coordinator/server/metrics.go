package server

import (
	"github.com/prometheus/client_golang/prometheus"
)

// --- metrics ---

type metrics struct {
	reg      *prometheus.Registry
	received prometheus.Counter
	rejected *prometheus.CounterVec
	refused  *prometheus.CounterVec
	// slowFrames counts connections closed because a frame's body took
	// longer than the frame read timeout.
	slowFrames prometheus.Counter
	duration   prometheus.Histogram
	commit     prometheus.Histogram
}

func newMetrics(s *Server) metrics {
	reg := prometheus.NewRegistry()
	m := metrics{
		reg:        reg,
		received:   prometheus.NewCounter(prometheus.CounterOpts{Name: "fedcast_updates_received_total", Help: "Updates accepted."}),
		rejected:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fedcast_messages_rejected_total", Help: "Client messages rejected, by protocol error code."}, []string{"code"}),
		refused:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fedcast_connections_refused_total", Help: "Websocket connections refused, by reason."}, []string{"reason"}),
		slowFrames: prometheus.NewCounter(prometheus.CounterOpts{Name: "fedcast_frames_timed_out_total", Help: "Connections closed because a frame body was not received within the frame read timeout."}),
		duration:   prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fedcast_round_duration_seconds", Help: "Time from a round's opening to its release (one slot unless committing overran the slack).", Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 12)}),
		commit:     prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fedcast_round_commit_seconds", Help: "Time to aggregate, noise and commit a round to the ledger.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 12)}),
	}
	locked := func(f func() float64) func() float64 {
		return func() float64 { s.mu.Lock(); defer s.mu.Unlock(); return f() }
	}
	reg.MustRegister(m.received, m.rejected, m.refused, m.slowFrames, m.duration, m.commit,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_clients_online", Help: "LHAs connected."}, locked(func() float64 { return float64(len(s.conns)) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_rounds_completed", Help: "Rounds committed."}, func() float64 { k, _ := s.co.Progress(); return float64(k) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_epsilon_spent", Help: "ε after the committed rounds."}, func() float64 { _, eps := s.co.Progress(); return eps }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_clients_enrolled", Help: "N, enrolled LHAs."}, func() float64 { return float64(len(s.eng.File.LHAs)) }),
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
	)
	return m
}
