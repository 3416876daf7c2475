package ui

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

// Reading the chosen file: its bytes, parsed while the page keeps painting.

// LoadFile parses a chosen file and checks it against the study, in the
// caller's goroutine (the bytes are already in memory). It takes the lock
// itself, only to publish results: the parsing and checking in between
// call Yield about every 30 ms so a large file does not freeze the page.
func (s *JoinState) LoadFile(name string, data []byte) {
	s.LoadReader(name, bytes.NewReader(data), len(data))
}

// LoadReader is LoadFile reading the file's size bytes from r. The bytes
// are read first (the encoding is decided on the whole file), then parsed
// through a reader that yields about every 30 ms, so a large file lets the
// browser paint while it is read and while its rows are parsed.
func (s *JoinState) LoadReader(name string, r io.Reader, size int) {
	s.lock()
	s.Reading = true
	s.FileName, s.FileBytes = name, size
	s.Data, s.DataProblem, s.Unusable, s.DataNotices, s.Areas, s.DataChart, s.Preview = nil, nil, nil, nil, nil, nil, nil
	s.prepared, s.Windows, s.PerRound, s.RoundEstimate = nil, 0, 0, 0
	s.unlock()

	var d *series.Dataset
	data, err := readSized(&yieldingReader{r: r, yield: s.Yield}, size)
	if err != nil {
		err = &series.ParseError{File: name, Err: fmt.Errorf("series: read: %w", err), Hint: "The file could not be read."}
	} else {
		d, err = series.ParseBytesVia(data, name, func(r io.Reader) io.Reader { return &yieldingReader{r: r, yield: s.Yield} })
	}
	data = nil // the parsed series are all that is kept
	var areas []AreaSummary
	if err == nil {
		last := time.Now()
		for _, r := range d.Regions {
			total := 0.0
			for _, v := range r.Cases {
				total += v
			}
			areas = append(areas, AreaSummary{Name: r.Name, First: r.Start.Format(time.DateOnly),
				Last: r.End().Format(time.DateOnly), Days: len(r.Cases), Total: total})
			last = s.maybeYield(last)
		}
	}
	ready := false
	rendering := time.Now()
	s.publish(func() {
		s.Reading = false
		if err != nil {
			s.DataProblem = DataProblem(err)
			return
		}
		s.Data, s.DataNotices, s.Areas, s.AreaPage = d, d.Notices, areas, 0
		s.Area = d.Regions[0].Name
		s.PreviewPage = 0
		s.refreshArea()
		ready = s.Welcome != nil
	})
	// Showing the file (two yields and a render of the page with it)
	// stands for a render during training, when the page is as large:
	// checkStudy counts it in the round estimate.
	s.renderCost = time.Since(rendering)
	if ready {
		s.checkStudy()
	}
}

// readSized reads all of r into one buffer of size bytes (growing only if
// r holds more), so a large file is copied into Go's memory once, without
// the doubling of io.ReadAll; the last read reaches EOF, which lets a
// browser-backed reader drop its copy at once.
func readSized(r io.Reader, size int) ([]byte, error) {
	data := make([]byte, max(size, 0))
	n, err := io.ReadFull(r, data)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return data[:n], nil
	case err != nil:
		return nil, err
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return append(data, rest...), nil
}

// yieldingReader calls yield about every 30 ms of reading (parsing happens
// between reads), so that parsing a large file lets the browser paint.
type yieldingReader struct {
	r     io.Reader
	yield func()
	last  time.Time
}

func (y *yieldingReader) Read(p []byte) (int, error) {
	if y.yield != nil {
		if y.last.IsZero() {
			y.last = time.Now()
		} else if time.Since(y.last) > 30*time.Millisecond {
			y.yield()
			y.last = time.Now()
		}
		if len(p) > 64<<10 {
			p = p[:64<<10] // small reads: a chance to yield every 64 KiB
		}
	}
	return y.r.Read(p)
}

// maybeYield calls Yield when 30 ms have passed since last.
func (s *JoinState) maybeYield(last time.Time) time.Time {
	if s.Yield == nil || time.Since(last) < 30*time.Millisecond {
		return last
	}
	s.Yield()
	return time.Now()
}

// FileError reports a file that could not be read at all.
func (s *JoinState) FileError(name string, err error) {
	s.lock()
	defer s.unlock()
	s.Reading = false
	s.FileName = name
	s.Data, s.DataNotices, s.Unusable = nil, nil, nil
	s.DataProblem = &Problem{Title: "The file could not be opened", Detail: err.Error(),
		Fix: "Choose the file again. If it is on a network drive, copy it to this computer first."}
}
