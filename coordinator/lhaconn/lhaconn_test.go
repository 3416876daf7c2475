package lhaconn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/session"
)

func TestJoinNeedsAReachableCoordinator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := Join(ctx, url+"/join#T", "", nil)
	if err == nil || !strings.Contains(err.Error(), "dial") || errors.Is(err, session.ErrNoDialer) {
		t.Errorf("join of a closed server: %v (want a dial error from the default dialer)", err)
	}
}
