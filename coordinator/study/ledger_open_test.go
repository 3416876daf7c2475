package study_test

import (
	"context"
	"encoding/json"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
)

// The package's own tests use serve's ledger through these (ledger_test.go).
func init() {
	study.LedgerStoreForTest = func(path string) (study.Store, error) {
		l, err := ledger.Open(path)
		if err != nil {
			return nil, err
		}
		return l.Store(), nil
	}
	study.LedgerExportForTest = func(path string) ([]byte, error) {
		l, err := ledger.Open(path)
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ex, err := l.Export(context.Background())
		if err != nil {
			return nil, err
		}
		return json.Marshal(ex)
	}
}
