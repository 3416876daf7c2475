package protocol_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/protocol/studytest"
)

// Every setting reaches the LHA: no field of Study hides one of the
// embedded Settings, by Go name (a selector would reach the wrong field)
// or by JSON name (encoding/json would drop the setting from the
// welcome). Each setting, changed alone, survives the welcome's JSON.
func TestSettingsNotShadowed(t *testing.T) {
	st := reflect.TypeFor[protocol.Study]()
	set, _ := st.FieldByName("Settings")
	n := 0
	for f := range reflect.TypeFor[protocol.Settings]().Fields() {
		got, ok := st.FieldByName(f.Name)
		if !ok || len(got.Index) != 2 || got.Index[0] != set.Index[0] {
			t.Errorf("Study.%s is not the setting (index %v)", f.Name, got.Index)
		}
		n++
	}
	for _, v := range studytest.Variants(validStudy()) {
		if !strings.HasPrefix(v.Field, "Settings.") {
			continue
		}
		n--
		b, err := json.Marshal(v.Study)
		if err != nil {
			t.Fatal(err)
		}
		var back protocol.Study
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", v.Field, err)
		}
		if !reflect.DeepEqual(back.Settings, v.Study.Settings) {
			t.Errorf("changed %s: the welcome carries %+v, want %+v", v.Field, back.Settings, v.Study.Settings)
		}
	}
	if n > 0 {
		t.Errorf("%d settings have no variant", n)
	}
}
