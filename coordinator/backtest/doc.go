// Package backtest replays a deployment of fedcast week by week
// (`fedcast backtest`): every area of a cases file is one simulated LHA of
// a live study's Coordinator run in process (coordinator/study,
// study.InProcess: the round engine `fedcast serve` drives), training campaigns run
// on a fixed schedule within one lifetime privacy budget, and at every
// forecast origin each LHA forecasts the total reported cases of the next 7
// days from what it knew then. The forecasts are written as hub files and
// scored against the hub baseline (relative WIS, coverage, per quarter).
//
// A forecasting design plugs in through Design; the public inputs it may
// read (national and state totals, population, holidays) are
// forecast.PublicInputs, cut to the day the design acts.
package backtest
