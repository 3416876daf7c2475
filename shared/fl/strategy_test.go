package fl

import "testing"

func TestParseStrategyAndGuarantee(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want StrategyName
		ok   bool
	}{{"", FedAvg, true}, {"fedavg", FedAvg, true}, {"mrmtl", MRMTL, true}, {"cyclic", Cyclic, true}, {"FedAvg", "", false}, {"sgd", "", false}} {
		got, err := ParseStrategy(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseStrategy(%q) = %q, %v; want %q, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		in   string
		want Guarantee
		ok   bool
	}{{"", ClientLevel, true}, {"client", ClientLevel, true}, {"example", ExampleLevel, true}, {"both", BothLevels, true}, {"user", "", false}} {
		got, err := ParseGuarantee(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseGuarantee(%q) = %q, %v; want %q, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
