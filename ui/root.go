package ui

import (
	"strings"
)

// Page names which page the app shows, from the URL path.
type Page string

const (
	PageHome  Page = "home"  // "/": how to get a link
	PageJoin  Page = "join"  // "/join#TOKEN": the LHA page
	PageAdmin Page = "admin" // "/admin#TOKEN": the coordinator dashboard
)

// PageOf maps a URL path to its page.
func PageOf(path string) Page {
	switch strings.TrimSuffix(path, "/") {
	case "/join":
		return PageJoin
	case "/admin":
		return PageAdmin
	}
	return PageHome
}

// Root is the app's top component (root.vugu). Exactly one of Join and
// Admin is set, according to Page.
type Root struct {
	Page  Page
	Join  *JoinState
	Admin *AdminState
}

// ready is "1" once the page has something to show (the join page has
// connected or failed, the dashboard has its first status); tests and
// timing measurements wait for it.
func (c *Root) ready() string {
	switch c.Page {
	case PageJoin:
		if c.Join != nil && c.Join.Phase != PhaseConnecting && c.Join.Phase != "" {
			return "1"
		}
		return "0"
	case PageAdmin:
		if c.Admin != nil && (c.Admin.Status != nil || c.Admin.Problem != nil) {
			return "1"
		}
		return "0"
	}
	return "1"
}

func (c *Root) tagline() string {
	switch c.Page {
	case PageJoin:
		return "Forecasting together, your data stay here"
	case PageAdmin:
		return "Study coordinator dashboard"
	}
	return ""
}
