package model

import "math"

// Lipschitz is the publishable design's feature map (issue 27, shared/publish):
// the windows are trailing 7-day averages (H = 7·(W−1)+1 days, so that
// x_H, x_{H−7}, … are the averages A_0, A_1, … of the last W weeks), and
// with u_w = log(κ + A_w) the inputs are z_j = u_j − u_{j+1}, j = 0 … W−2,
// written in the first W−1 inputs (the others are always 0). The target
// is log(κ + y) − u_0 with y the next week's average (horizon 7). The
// network is trained with power iteration and every released model is
// projected to spectral norm ≤ 1 per layer (fl.Config.Spectral), so that
// the restriction of its first layer to the first W−1 inputs is the
// 1-Lipschitz network publish.Forecaster publishes with.
const Lipschitz Features = "lipschitz"

// The Lipschitz design's public constants: the floor κ (publish.DefaultKappa),
// the weeks it reads and its input days H.
const (
	LipschitzKappa   = 50
	LipschitzWeeks   = 3
	LipschitzHistory = 7*(LipschitzWeeks-1) + 1
	// lipschitzMaxChange is publish.MaxLogChange.
	lipschitzMaxChange = 3
)

// LipschitzDesign is the study design of a publishable model: the
// Lipschitz features over 3 weeks, one hidden layer of 8 units, T = 5,
// every LHA every round, E = 30, S = 0.5, learning rate 0.01, damping 0.1.
var LipschitzDesign = Design{
	Name: "lipschitz", Features: Lipschitz, History: LipschitzHistory, Hidden: []int{8},
	Rounds: 5, SampleRate: 1, LocalEpochs: 30, Clip: 0.5, LearningRate: 0.01,
	Damping: 0.1, Accountant: "rdp",
}

// lipschitzLog is u = log(κ + v), negative values read as 0.
func lipschitzLog(v float64) float64 { return math.Log(LipschitzKappa + max(v, 0)) }

// lipschitzInput writes z_0 … z_{W−2} and zeros into dst (dst may be x).
func lipschitzInput(dst, x []float64) {
	h := len(x)
	weeks := (h-1)/7 + 1
	z := make([]float64, weeks-1)
	for j := range z {
		z[j] = lipschitzLog(x[h-1-7*j]) - lipschitzLog(x[h-1-7*(j+1)])
	}
	clear(dst)
	copy(dst, z)
}

// lipschitzForecast is the median exp(u_0 + clamp(out)) − κ, never below 0.
func lipschitzForecast(x []float64, out float64) float64 {
	if math.IsNaN(out) {
		out = 0
	}
	out = max(-lipschitzMaxChange, min(lipschitzMaxChange, out))
	return max(0, math.Exp(lipschitzLog(x[len(x)-1])+out)-LipschitzKappa)
}
