package ui

// LineChart draws a Chart as SVG (line-chart.vugu).
type LineChart struct {
	Chart *Chart // Required.
	plot  *Plot
}

// BeforeBuild lays the chart out once per render.
func (c *LineChart) BeforeBuild() {
	if c.Chart == nil {
		c.Chart = &Chart{}
	}
	c.plot = c.Chart.Layout()
}

func (c *LineChart) pathClass(p Path) string {
	if p.Bars {
		return "bars"
	}
	return "line"
}

func (c *LineChart) legendClass(l LegendItem) string {
	if l.Band {
		return "band"
	}
	if l.Bars {
		return "bars"
	}
	return "line"
}
