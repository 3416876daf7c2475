package e2e

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/coordinator/web"
)

func TestPageOnlyCSV(t *testing.T) {
	ctx := browser(t)
	app := webApp(t)
	srv := httptest.NewServer(web.Handler(app.Dir))
	defer srv.Close()
	start := time.Now()
	within(t, ctx, 60*time.Second, "loading the page", chromedp.Navigate(srv.URL+"/join#nosuchtoken"),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)))
	t.Logf("ready after %v", time.Since(start))
	shot(t, ctx, "1-loaded")
	abs, _ := filepath.Abs("testdata/lha.csv")
	within(t, ctx, 30*time.Second, "uploading the CSV", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{abs}),
		chromedp.WaitVisible(chromedp.CSS("#data-ok")))
	txt, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#data-ok")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt, "2 areas") {
		t.Errorf("data summary %q", txt)
	}
	shot(t, ctx, "2-csv")
}
