package backtest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/series"
)

// A counties file saved by a spreadsheet reads as the plain one: commas,
// semicolons (German "CSV") or tabs, with or without a byte-order mark.
func TestParseCountiesSeparators(t *testing.T) {
	const plain = "county_id,name,state,population\n01001,Flensburg,Schleswig-Holstein,91113\n09162,München,Bayern,1484226\n"
	want, err := ParseCounties([]byte(plain), "counties.csv")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"semicolons":      strings.ReplaceAll(plain, ",", ";"),
		"tabs":            strings.ReplaceAll(plain, ",", "\t"),
		"BOM, commas":     "\uFEFF" + plain,
		"BOM, semicolons": "\uFEFF" + strings.ReplaceAll(plain, ",", ";"),
	} {
		got, err := ParseCounties([]byte(body), "counties.csv")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, want)
		}
	}
	_, err = ParseCounties([]byte("county_id;name;population\n01001;Flensburg;91113\n"), "mine.csv")
	if err == nil || !strings.Contains(err.Error(), "mine.csv: line 1: want the columns county_id and state (have county_id;name;population)") {
		t.Errorf("no state column: %v", err)
	}
}

// TestParseCountiesIDColumn: the area ids may sit under any name the
// populations are read under (AGS, district, …), as in the cases file.
// A counties file "AGS;name;state;population" had its populations read
// and was then refused: "want the columns county_id and state".
func TestParseCountiesIDColumn(t *testing.T) {
	const plain = "county_id,name,state,population\n01001,Flensburg,Schleswig-Holstein,91113\n09162,München,Bayern,1484226\n"
	want, err := ParseCounties([]byte(plain), "counties.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"AGS", "district", "Landkreis_ID", "lha"} {
		body := strings.ReplaceAll(strings.Replace(plain, "county_id", name, 1), ",", ";")
		got, err := ParseCounties([]byte(body), "counties.csv")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, want)
		}
	}
	// The ids come before the names, whatever the order of the columns.
	got, err := ParseCounties([]byte("name,state,population,ags\nFlensburg,Schleswig-Holstein,91113,01001\nMünchen,Bayern,1484226,09162\n"), "c.csv")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ids last: %+v, %v; want %+v", got, err, want)
	}
}

// TestCountiesCheckLeadingZeros: ids that lost their leading zeros in one
// file (a spreadsheet reading them as numbers) are named as the cause;
// the check said only "30 areas of the cases file are not in counties.csv
// (first: "1001")".
func TestCountiesCheckLeadingZeros(t *testing.T) {
	c, err := ParseCounties([]byte("county_id,name,state,population\n01001,Flensburg,Schleswig-Holstein,91113\n"), "counties.csv")
	if err != nil {
		t.Fatal(err)
	}
	d := &series.Dataset{Regions: []*series.Region{{Name: "1001"}}}
	err = c.Check(d, "counties.csv")
	if err == nil || !strings.Contains(err.Error(), `counties.csv has "01001": the leading zeros of the ids were lost`) {
		t.Errorf("%v", err)
	}
	d = &series.Dataset{Regions: []*series.Region{{Name: "02000"}}}
	if err = c.Check(d, "counties.csv"); err == nil || strings.Contains(err.Error(), "leading zeros") {
		t.Errorf("an id that is simply missing: %v", err)
	}
}
