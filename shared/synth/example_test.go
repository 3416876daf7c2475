package synth_test

import (
	"fmt"
	"os"

	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

func ExampleGenerate() {
	d, areas, err := synth.Generate(synth.Options{Areas: 3, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	first, last := d.Span()
	fmt.Println(len(d.Regions), "areas from", first.Format("2006-01-02"), "to", last.Format("2006-01-02"))
	for _, a := range areas {
		r := d.Region(a.ID)
		total := 0.0
		for _, v := range r.Cases {
			total += v
		}
		fmt.Printf("%s %s (%s): %.0f inhabitants, %.0f reported cases\n", a.ID, a.Name, a.State, a.Population, total)
	}
	// The windows the trainer sees.
	windows, err := series.MakeWindows(d, series.WindowOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(windows[0].Windows), "windows per area")
	// Output:
	// 3 areas from 2020-10-01 to 2020-12-31
	// S001 Elmton (North-East): 23603 inhabitants, 1376 reported cases
	// S002 Marburg (South-West): 49241 inhabitants, 3612 reported cases
	// S003 Marmore (South-West): 346410 inhabitants, 27024 reported cases
	// 69 windows per area
}

func ExampleWritePopulations() {
	_, areas, err := synth.Generate(synth.Options{Areas: 2, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := synth.WritePopulations(os.Stdout, areas); err != nil {
		fmt.Println(err)
	}
	// Output:
	// county_id,name,state,population
	// S001,Elmton,North-East,23603
	// S002,Marburg,South-West,49241
}
