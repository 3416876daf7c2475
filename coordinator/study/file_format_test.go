package study

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"
)

// A study file written before the settings moved into protocol.Settings
// (testdata/file_v1.json, every kind of field set) still reads, means
// the same, and is written back byte for byte: embedding the settings
// left the file format as it was.
func TestFileFormatUnchanged(t *testing.T) {
	b, err := os.ReadFile("testdata/file_v1.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(b)
	if err != nil {
		t.Fatalf("a file of today's format is refused: %v", err)
	}
	out, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, b) {
		t.Errorf("the file is written differently:\n%s\nwant\n%s", out, b)
	}
	st := f.study()
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"every", time.Duration(st.Every), 168 * time.Hour},
		{"round_length", time.Duration(st.RoundLength), 90 * time.Second},
		{"round_slack", time.Duration(st.RoundSlack), 9 * time.Second},
		{"restart_grace", f.ResumeWait(), 2 * time.Minute},
		{"noise_schedule", st.NoiseSchedule, "linear:0.5"},
		{"accountant", string(st.Accountant), "pld"},
		{"strategy", st.Strategy, "mrmtl"},
		{"layers", slices.Equal(st.Layers, []int{13, 16, 8, 1}), true},
		{"name", st.Name, "Kreise im Norden"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	// The welcome carries every setting under the file's name, with the
	// file's value.
	var file, welcome map[string]json.RawMessage
	sb, _ := json.Marshal(f.Settings)
	wb, _ := json.Marshal(st)
	if json.Unmarshal(sb, &file) != nil || json.Unmarshal(wb, &welcome) != nil {
		t.Fatal("cannot decode the encodings")
	}
	for k, v := range file {
		if w, ok := welcome[k]; !ok || !bytes.Equal(w, v) {
			t.Errorf("setting %s is %s in the file, %s in the welcome", k, v, w)
		}
	}
	if len(file) < 20 {
		t.Errorf("only %d settings in the fixture: %v", len(file), file)
	}
}
