package secagg

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestReportRoundTrip(t *testing.T) {
	key := testKey(t)
	k := []int64{5, -3, 0, 16000}
	r, err := NewReport(key.PublicKey(), testStudy, 12, 7, k)
	if err != nil {
		t.Fatal(err)
	}
	b := r.Marshal()
	if len(b) != ReportSize(len(k)) || ReportSize(241) != 8*241+112 {
		t.Fatalf("size %d, ReportSize(4) = %d", len(b), ReportSize(4))
	}
	got, err := UnmarshalReport(b, len(k))
	if err != nil {
		t.Fatal(err)
	}
	if got.Round != 12 || got.ID != r.ID || got.ID.Client() != 7 || !bytes.Equal(got.SealedSeed, r.SealedSeed) || !slices.Equal(got.Leader, r.Leader) {
		t.Fatalf("round trip changed the report: %+v", got)
	}
	seed, err := key.Open(got.SealedSeed, AssociatedData(testStudy, 12, got.ID))
	if err != nil {
		t.Fatal(err)
	}
	h := make([]uint64, len(k))
	Expand(h, seed, Ring64)
	for j := range k {
		if Ring64.Lift(h[j]+got.Leader[j]) != k[j] {
			t.Fatalf("coordinate %d does not reconstruct", j)
		}
	}
}

func TestUnmarshalReportErrors(t *testing.T) {
	key := testKey(t)
	good, _ := NewReport(key.PublicKey(), testStudy, 1, 0, []int64{1, 2})
	b := good.Marshal()
	mod := func(f func(b []byte) []byte) []byte { return f(slices.Clone(b)) }
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"short", b[:10], "10 bytes"},
		{"long", append(slices.Clone(b), 0), "bytes, a report of 2 parameters"},
		{"version", mod(func(b []byte) []byte { b[0] = 9; return b }), "version 9"},
		{"reserved", mod(func(b []byte) []byte { b[2] = 1; return b }), "reserved bytes"},
		{"round", mod(func(b []byte) []byte { b[4] = 0xff; return b }), "round"},
		{"dimension", mod(func(b []byte) []byte { b[reportHeader-1] = 3; return b }), "dimension field 3"},
	} {
		_, err := UnmarshalReport(c.b, 2)
		if !errors.Is(err, ErrReport) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrReport saying %q", c.name, err, c.want)
		}
	}
}

func FuzzUnmarshalReport(f *testing.F) {
	key, _ := GenerateKey()
	r, _ := NewReport(key.PublicKey(), testStudy, 1, 0, []int64{1, 2, 3})
	f.Add(r.Marshal())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := UnmarshalReport(b, 3)
		if err != nil {
			return
		}
		if !bytes.Equal(r.Marshal(), b) {
			t.Fatal("marshal(unmarshal(b)) != b")
		}
	})
}

func TestKeyFiles(t *testing.T) {
	k := testKey(t)
	priv, err := k.MarshalPrivate()
	if err != nil {
		t.Fatal(err)
	}
	pub := k.PublicKey().MarshalPublic()
	k2, err := ParsePrivateFile("helper.key", priv)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := ParsePublicFile("helper.pub", pub)
	if err != nil {
		t.Fatal(err)
	}
	fp := k.PublicKey().Fingerprint()
	if p2.Fingerprint() != fp || k2.PublicKey().Fingerprint() != fp {
		t.Fatal("fingerprint changed through the files")
	}
	if len(fp) != 39 || strings.Count(fp, " ") != 7 {
		t.Errorf("fingerprint %q: want 8 groups of 4 hex digits", fp)
	}
	// A seed sealed to the parsed public key opens with the parsed private key.
	ad := AssociatedData(testStudy, 1, idFor(1))
	s, err := Seal(p2, seedFor(3), ad)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != SealedSize {
		t.Errorf("sealed %d bytes, want %d", len(s), SealedSize)
	}
	if got, err := k2.Open(s, ad); err != nil || got != seedFor(3) {
		t.Fatalf("open: %v", err)
	}
	other := testKey(t).PublicKey().MarshalPublic()
	mixed := strings.Replace(string(pub), fp, testKey(t).PublicKey().Fingerprint(), 1)
	for _, c := range []struct {
		name, data, want string
		private          bool
	}{
		{"helper.pub", "not json", "helper.pub: not a helper key file", false},
		{"helper.pub", `{"kem":"RSA"}`, `field kem is "RSA"`, false},
		{"helper.pub", mixed, "field fingerprint", false},
		{"helper.pub", string(pub), "field private_key is missing", true},
		{"helper.key", strings.Replace(string(priv), `"public_key": "`, `"public_key": "`+string(other[0:0]), 1) + "x", "not a helper key file", true},
	} {
		var err error
		if c.private {
			_, err = ParsePrivateFile(c.name, []byte(c.data))
		} else {
			_, err = ParsePublicFile(c.name, []byte(c.data))
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: %v, want %q", c.name, c.data[:min(20, len(c.data))], err, c.want)
		}
	}
	if _, err := ParsePublicKey([]byte{1, 2}); err == nil {
		t.Error("ParsePublicKey of 2 bytes: no error")
	}
}
