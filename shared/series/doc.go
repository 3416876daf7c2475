// Package series turns a local health authority's CSV of daily reported
// cases into the supervised windows fedcast trains on (spec §3, after
// Kerkouche et al., "Data preprocessing").
//
// # Overview
//
// The pipeline has four steps, each a plain function:
//
//	d, err := series.ReadFile("cases.csv")              // CSV → per-region daily series
//	areas, err := series.MakeWindows(d, series.WindowOptions{
//		From: nov1, To: dec1,                           // study window, both ends inclusive
//	})                                                  // 7-day centred average, H = 10, P = 7
//	train, test := series.SplitAreas(areas, series.Temporal, 0, nil) // 90 % / 10 % per area
//	x, y := series.Stack(train)                         // n×H row-major matrix and targets
//
// # Units and conventions
//
// A count is the number of new cases reported in one region on one
// calendar day (by reporting date in the real data). Dates are calendar
// days, stored as UTC midnight; a time.Time argument is reduced to its
// calendar date in its own location. A Region holds a dense series with
// no gaps: days missing from the file between a region's first and last
// date count as zero reported cases (spec §3). A region whose file covers
// two periods a year apart (as the team's county file does:
// 2020-10-01 … 2020-12-31 and 2022-02-01 … 2022-04-30) therefore spans
// the whole range with zeros in between; that costs a few kilobytes per
// region and nothing else, and study windows are chosen with From/To.
//
// Region identifiers are strings exactly as written (after trimming
// spaces): county code "01001" keeps its leading zero. The identifier is
// never a model feature.
//
// # CSV files
//
// Parse accepts long format, one row per region and day:
//
//	date,region,cases
//	2020-11-01,01001,12
//	2020-11-01,01002,30
//
// Header names are matched case-insensitively (spaces and hyphens count
// as underscores), columns may come in any order, and other columns are
// ignored. Accepted names, preferred first when several match:
//
//	date:   date, day, reporting_date, report_date, meldedatum, datum
//	region: region, region_id, county_id, id, lha, lha_id, district,
//	        district_id, county, area, area_id, location, idlandkreis, ags
//	cases:  cases, new_cases, count, value, confirmed, anzahlfall,
//	        faelle, fälle
//
// A file without a region column is a single region named after the
// file. The delimiter may be ',', ';' or a tab (detected from the header
// line); a UTF-8 byte-order mark, Windows line ends, quoted cells and
// blank rows are fine. Dates are YYYY-MM-DD (YYYY/MM/DD is also read).
// Counts are non-negative whole numbers ("12.0" reads as 12; with ';' as
// delimiter "12,0" too).
//
// Every problem is a *ParseError naming the file, the 1-based line, the
// 1-based column (field number, as a spreadsheet counts) and the column's
// name, wrapping a sentinel for errors.Is and carrying a Hint written for
// the person who made the file:
//
//	cases.csv:12:3 (cases): series: negative count "-4"
//
// ParsePopulations reads area metadata (county_id,name,state,population)
// in the same style. Write writes a Dataset back in long format, and
// Parse(Write(d)) equals d.
//
// # Smoothing
//
// MovingAverage7 computes the 7-day moving average used as both input and
// target. Centered (the default) averages days t−3 … t+3 and is what the
// paper trains on; Trailing averages t−6 … t (the paper's revised code)
// and allows forecasts from the last reported day. Days where the window
// would leave the data are NaN.
//
// # Windows
//
// A window has the smoothed values of H consecutive days as input (H = 10)
// and the smoothed value P days after the last of them as target (P = 7).
// MakeWindows reproduces the indexing of the paper's published code
// (county_dp.py): with the study window's days numbered 0 … L−1, samples
// end their inputs on day k for H ≤ k ≤ L−1−P, giving L−H−P windows per
// region: 14 for 2020-11-01 … 2020-12-01 and 15 for 2022-03-01 …
// 2022-04-01. The smoothing reads raw days outside the study window
// (±3 days for the centred average), which must be present.
//
// SplitAreas divides each area's windows into the earliest int(0.9·n) by
// target date for training and the rest for testing (Temporal, the
// default), or does so after a seeded shuffle (Random, as the paper's
// code does). LatestInput gives the newest complete input window of a
// region for a live forecast and says which date it forecasts.
//
// # Errors
//
// Data problems return errors (sentinels such as ErrBadDate, ErrNotCovered,
// ErrTooShort; *ParseError for file contents). Programmer errors panic
// with a "series:" prefix: mismatched slice lengths in MovingAverage7,
// ragged windows in Stack, an invalid fraction or missing generator in
// SplitAreas.
package series
