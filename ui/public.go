package ui

import (
	"fmt"
	"strings"
)

// publicInputsWords lists the study's public inputs on the study card:
// what they are, where they come from and their SHA-256, and that they are
// public, never taken from any authority's data ("" without any).
func (c *JoinPage) publicInputsWords() string {
	ps := c.S.Welcome.Study.PublicInputs
	if len(ps) == 0 {
		return ""
	}
	var parts []string
	for _, p := range ps {
		what := "National and state case totals"
		if p.Name == "holidays" {
			what = "Public holidays"
		}
		s := fmt.Sprintf("%s: %s", what, p.Source)
		if p.SHA256 != "" {
			s += fmt.Sprintf(" (file of %s, SHA-256 %s; the coordinator serves it, and a copy with another fingerprint is refused)", FormatBytes(p.Bytes), p.SHA256)
		}
		parts = append(parts, s+".")
	}
	return "The model also reads these public data, the same for every authority and never taken from anyone's file: " + strings.Join(parts, " ")
}
