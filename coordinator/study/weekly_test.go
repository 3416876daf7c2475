package study

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/protocol"
)

// A weekly study: the design fills its windows, 16 inputs, trailing
// averages and horizon 7; it needs the declared totals file, and the
// engine starts it at no change (output layer 0).
func TestWeeklyStudyFile(t *testing.T) {
	d, err := model.ReplayPreset("weekly")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Create(CreateOptions{Names: names(2), Template: File{Settings: protocol.Settings{Name: "w", Epsilon: 2}}, Design: &d}); !errors.Is(err, ErrConfig) ||
		!strings.Contains(err.Error(), "--public") {
		t.Fatalf("a weekly study without public totals: %v", err)
	}
	path := filepath.Join(t.TempDir(), "public.csv")
	if err := os.WriteFile(path, []byte("kind,name,state,population,date,cases\ntotal,national,,,2020-10-01,5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmpl := File{Settings: protocol.Settings{Name: "w", Epsilon: 2}}
	if err := tmpl.DeclarePublic(path, "test", "holidays"); err != nil {
		t.Fatal(err)
	}
	f, _, err := Create(CreateOptions{Names: names(2), Template: tmpl, Design: &d})
	if err != nil {
		t.Fatal(err)
	}
	st := f.Public(1, false)
	if st.Weekly == nil || st.Features != string(model.WeeklyTotal) || st.Layers[0] != 16 || st.History != 16 ||
		st.Smoothing != "trailing" || st.Horizon != 7 {
		t.Fatalf("weekly study: %+v", st)
	}
	bad := *f
	bad.Weekly = nil
	if err := bad.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("features weekly-total without the windows: %v", err)
	}
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := Open(f, raw, &MemStore{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := eng.Global()
	last := 32 + 1 // the output layer: 32 weights and a bias
	for _, v := range w[len(w)-last:] {
		if v != 0 {
			t.Fatalf("the initial model's output layer is not zero (no change): %v", w[len(w)-last:])
		}
	}
}
