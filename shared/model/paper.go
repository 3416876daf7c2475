package model

// The paper's settings besides its Design (spec §4): the windows (H input
// days, P days ahead), the share of each area's windows used for
// training, and δ. With Paper these are the one place the paper's
// defaults are written; the study file (coordinator/study.File.Defaults)
// and the experiments (coordinator/experiment) take theirs from here.
const (
	PaperHistory       = 10
	PaperHorizon       = 7
	PaperTrainFraction = 0.9
	PaperDelta         = 1e-5
)
