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
// region, Parse warns about such runs of missing days (see below), and
// study windows are chosen with From/To to leave them out.
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
//	date:   date, day, reporting_date, report_date, date_reported,
//	        meldedatum, datum, refdatum, reference_date, tag
//	region: region, region_id, county_id, id, lha, lha_id, district,
//	        district_id, county, area, area_id, location, idlandkreis, ags,
//	        landkreis_id, kreis_id, kreisschluessel, landkreis, kreis,
//	        gemeinde_id, gemeinde, bezirk, stadtkreis, kommune, fips,
//	        county_fips, county_name, district_name, region_name,
//	        area_name, municipality, idbundesland, bundesland
//	cases:  new cases per day first (cases_new, new_cases, daily_cases,
//	        new_confirmed, neue_faelle, anzahlfall, …), then plain names
//	        (cases, count, value, confirmed, faelle, fälle, fallzahl,
//	        anzahl, …), then running totals (cumulative_cases,
//	        total_cases, cases_total, faelle_kumuliert, …)
//
// Columns of deaths, recoveries, weekly sums, rates per inhabitants,
// incidences and percentages are never taken for cases.
//
// A file without a region column is a single region named after the
// file (the per-district layout Date, Cases, Deaths, Cases_New, …);
// a date that repeats in such a file is an error saying that no column
// holds the area. The delimiter may be ',', ';' or a tab (detected from
// the header line); a UTF-8 byte-order mark, Windows line ends, quoted
// cells and blank rows are fine, and a file that is not valid UTF-8 is
// read as Windows-1252. Spreadsheet workbooks (.xlsx, .xls) and
// compressed files are refused (ErrSpreadsheet) with the steps to save
// them as CSV. Dates are YYYY-MM-DD (YYYY/MM/DD is also read),
// DD.MM.YYYY, or DD/MM/YYYY or MM/DD/YYYY when some date in the file has
// a number above 12 that shows the order; the first row sets the format.
// Counts are non-negative whole numbers ("12.0" reads as 12; with ';' as
// delimiter "12,0" too). The one exception: in a column named as new
// cases per day (Cases_New, new_cases, …) a negative count is a
// correction of earlier days, read as 0 with a NoticeCorrection warning.
//
// # Running totals, case lists, gaps: notices
//
// Parse returns with the data what it did and noticed, so that the
// person who made the file can check it: Dataset.Columns says which
// column was taken for the date, the area and the cases, and what the
// cases column held (CasesDaily, CasesRunning, CasesLineList);
// Dataset.Notices are Notice values with a stable Code, a Level (Info or
// Warning), a Message and a Hint in plain words. `fedcast data check`,
// `fedcast client` and the browser page all show these same texts.
//
//   - A running total is a column named as one (cumulative_cases, …) or
//     a plain column that, in every area that can be judged, only ever
//     rises over at least MinRunningTotalDays reported days and reaches
//     100 (sparse and all-zero series are never judged). It is turned
//     into daily counts by differences between reported days; the first
//     day of each area is dropped, and a falling total (a correction)
//     gives 0 that day (NoticeRunningTotal, NoticeCorrection, both
//     warnings). A column named as new cases per day that looks like a
//     running total is kept, with a warning (NoticeMaybeTotal).
//   - RKI-style case lists (a cases column AnzahlFall, or a NeuerFall
//     column) have several rows per area and day, by age group and sex;
//     they are added up, and rows with NeuerFall = -1 (cases taken back
//     since the previous day's list) are left out (NoticeLineList). In
//     any other file a repeated (area, day) is an error.
//   - Runs of at least MinMissingRun days without a row inside an area's
//     range count as zero cases like every missing day, and get a warning
//     with their dates (NoticeMissingDays). So do runs of at least
//     MinZeroRun days whose rows all say 0 after an average of
//     ZeroRunAfter cases a day or more in the four weeks before
//     (NoticeZeroRun): a sudden drop to nothing usually means days not
//     reported. Dataset.MissingDaysIn tells whether a study window meets
//     either.
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
// Parse(Write(d)) gives d's regions back, unless their daily counts
// themselves only ever rise (then read as a running total, as above).
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
