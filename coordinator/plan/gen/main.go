// Command gen measures the planner's table (go generate ./coordinator/plan):
// backtests of the default design at a grid of noise levels on synthetic
// outbreaks and, when given, on the public county history (the national
// institute's published series: ../shared/data/county_cases_2020-03_2021-06.csv,
// origins 2020-10-05 … 2021-06-21). No LHA's data.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/fedcast/fedcast/coordinator/backtest"
	"github.com/fedcast/fedcast/coordinator/plan"
	"github.com/fedcast/fedcast/shared/series"
)

func main() {
	out := flag.String("out", "table.json", "table file to write")
	history := flag.String("history", "../../../shared/data/county_cases_2020-03_2021-06.csv", "public county history (empty: synthetic outbreaks only)")
	counties := flag.String("counties", "../../../shared/data/counties.csv", "counties file of the history (states)")
	flag.Parse()
	if err := run(*out, *history, *counties); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out, history, counties string) error {
	obs, err := plan.SyntheticOutbreaks([]int{8, 40}, []uint64{101, 102})
	if err != nil {
		return err
	}
	if history != "" {
		data, err := series.ReadFile(history)
		if err != nil {
			return err
		}
		meta, err := backtest.ReadCounties(counties)
		if err != nil {
			return err
		}
		from, _ := time.Parse(time.DateOnly, "2020-10-05")
		to, _ := time.Parse(time.DateOnly, "2021-06-21")
		obs = append(obs, plan.Outbreak{Name: fmt.Sprintf("public county history, %d areas, origins 2020-10-05 … 2021-06-21", len(data.Regions)), Data: data, States: meta.State, Population: meta.Population, From: from, To: to})
	}
	t, err := plan.Build(plan.BuildOptions{Everys: plan.DefaultEverys, Zs: plan.DefaultZs, Outbreaks: obs, Progress: os.Stderr})
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}
