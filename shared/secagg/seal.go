package secagg

import (
	"crypto/ecdh"
	"crypto/hpke"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The HPKE suite (RFC 9180, base mode) that seals seeds to the helper:
// DHKEM(X25519, HKDF-SHA256), HKDF-SHA256 and ChaCha20-Poly1305 (fast
// without AES instructions, as in a browser's WebAssembly).
var (
	kem  = hpke.DHKEM(ecdh.X25519())
	kdf  = hpke.HKDFSHA256()
	aead = hpke.ChaCha20Poly1305()
)

// KEMName names the suite's key type in key files.
const KEMName = "DHKEM(X25519, HKDF-SHA256)"

// hpkeInfo is HPKE's info string: it binds every sealed seed to this use.
const hpkeInfo = "fedcast secagg seed v1"

// SealedSize is the length of a sealed seed: the 32-byte encapsulated key,
// the 32-byte seed and the 16-byte Poly1305 tag.
const SealedSize = 32 + SeedSize + 16

// ErrOpen is returned when a sealed seed does not open: it was sealed to
// another key, altered, or sealed for another study, round or report.
var ErrOpen = errors.New("secagg: the sealed seed does not open")

// A PublicKey is the helper's HPKE public key, which LHAs seal seeds to.
type PublicKey struct{ pk hpke.PublicKey }

// A PrivateKey is the helper's HPKE private key.
type PrivateKey struct{ sk hpke.PrivateKey }

// GenerateKey returns a new helper key pair (crypto/rand).
func GenerateKey() (*PrivateKey, error) {
	sk, err := kem.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("secagg: generating the helper key: %w", err)
	}
	return &PrivateKey{sk: sk}, nil
}

// PublicKey returns the key's public half.
func (k *PrivateKey) PublicKey() *PublicKey { return &PublicKey{pk: k.sk.PublicKey()} }

// ParsePublicKey reads a public key's bytes (Bytes).
func ParsePublicKey(b []byte) (*PublicKey, error) {
	pk, err := kem.NewPublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("secagg: helper public key: %d bytes that are not an X25519 public key", len(b))
	}
	return &PublicKey{pk: pk}, nil
}

// Bytes returns the public key's 32 bytes (RFC 9180 SerializePublicKey).
func (p *PublicKey) Bytes() []byte { return p.pk.Bytes() }

// Fingerprint returns the key's fingerprint, which people compare to make
// sure they talk to the right helper: the first 16 bytes of
// SHA-256("fedcast helper key v1" ‖ 0x00 ‖ the key's bytes) in eight
// groups of four hex digits, "1a2b 3c4d …".
func (p *PublicKey) Fingerprint() string {
	h := sha256.New()
	h.Write([]byte("fedcast helper key v1\x00"))
	h.Write(p.pk.Bytes())
	s := hex.EncodeToString(h.Sum(nil)[:16])
	var g []string
	for i := 0; i < len(s); i += 4 {
		g = append(g, s[i:i+4])
	}
	return strings.Join(g, " ")
}

// keyFile is the JSON of helper.key and helper.pub.
type keyFile struct {
	KEM         string `json:"kem"`
	PublicKey   string `json:"public_key"`
	Fingerprint string `json:"fingerprint"`
	PrivateKey  string `json:"private_key,omitempty"`
}

// MarshalPublic returns the helper.pub file: JSON with the suite's KEM
// name, the public key (base64) and its fingerprint.
func (p *PublicKey) MarshalPublic() []byte {
	b, _ := json.MarshalIndent(keyFile{KEM: KEMName, PublicKey: base64.StdEncoding.EncodeToString(p.Bytes()),
		Fingerprint: p.Fingerprint()}, "", "  ")
	return append(b, '\n')
}

// MarshalPrivate returns the helper.key file: helper.pub's fields plus the
// private key (base64). Keep it secret (mode 0600).
func (k *PrivateKey) MarshalPrivate() ([]byte, error) {
	sb, err := k.sk.Bytes()
	if err != nil {
		return nil, fmt.Errorf("secagg: helper key: %w", err)
	}
	p := k.PublicKey()
	b, _ := json.MarshalIndent(keyFile{KEM: KEMName, PublicKey: base64.StdEncoding.EncodeToString(p.Bytes()),
		Fingerprint: p.Fingerprint(), PrivateKey: base64.StdEncoding.EncodeToString(sb)}, "", "  ")
	return append(b, '\n'), nil
}

// readKeyFile decodes a key file; name is the file's name for errors.
func readKeyFile(name string, data []byte) (keyFile, []byte, error) {
	var f keyFile
	if err := json.Unmarshal(data, &f); err != nil {
		return f, nil, fmt.Errorf("secagg: %s: not a helper key file (%v)", name, err)
	}
	if f.KEM != KEMName {
		return f, nil, fmt.Errorf("secagg: %s: field kem is %q, want %q", name, f.KEM, KEMName)
	}
	pub, err := base64.StdEncoding.DecodeString(f.PublicKey)
	if err != nil {
		return f, nil, fmt.Errorf("secagg: %s: field public_key is not base64", name)
	}
	return f, pub, nil
}

// ParsePublicFile reads a helper.pub file (MarshalPublic); a helper.key
// file is accepted too (its public half is used). name names the file in
// errors. A fingerprint that does not match the key is an error.
func ParsePublicFile(name string, data []byte) (*PublicKey, error) {
	f, pub, err := readKeyFile(name, data)
	if err != nil {
		return nil, err
	}
	p, err := ParsePublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.Fingerprint != "" && f.Fingerprint != p.Fingerprint() {
		return nil, fmt.Errorf("secagg: %s: field fingerprint %q does not belong to the key (its fingerprint is %q)", name, f.Fingerprint, p.Fingerprint())
	}
	return p, nil
}

// ParsePrivateFile reads a helper.key file (MarshalPrivate). name names the
// file in errors.
func ParsePrivateFile(name string, data []byte) (*PrivateKey, error) {
	f, pub, err := readKeyFile(name, data)
	if err != nil {
		return nil, err
	}
	sb, err := base64.StdEncoding.DecodeString(f.PrivateKey)
	if err != nil || len(sb) == 0 {
		return nil, fmt.Errorf("secagg: %s: field private_key is missing or not base64 (is this the helper.pub file?)", name)
	}
	sk, err := kem.NewPrivateKey(sb)
	if err != nil {
		return nil, fmt.Errorf("secagg: %s: field private_key is not an X25519 private key", name)
	}
	k := &PrivateKey{sk: sk}
	if string(k.PublicKey().Bytes()) != string(pub) {
		return nil, fmt.Errorf("secagg: %s: field public_key does not belong to private_key", name)
	}
	return k, nil
}

// ReportIDSize is the length of a report ID.
const ReportIDSize = 16

// A ReportID names one report: the LHA's number in the study (the first
// four bytes, big-endian), then 12 random bytes. The helper accepts at most
// one report per LHA number per round.
type ReportID [ReportIDSize]byte

// NewReportID returns a report ID for the LHA numbered client.
func NewReportID(client uint32) ReportID {
	var id ReportID
	binary.BigEndian.PutUint32(id[:4], client)
	rand.Read(id[4:]) // never returns an error (crypto/rand)
	return id
}

// Client returns the LHA number the ID carries.
func (id ReportID) Client() uint32 { return binary.BigEndian.Uint32(id[:4]) }

// String returns the ID in hex.
func (id ReportID) String() string { return hex.EncodeToString(id[:]) }

// MarshalText returns the ID in hex (its JSON form).
func (id ReportID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText reads an ID in hex.
func (id *ReportID) UnmarshalText(b []byte) error {
	if len(b) != 2*ReportIDSize {
		return fmt.Errorf("secagg: report ID %q: want %d hex digits", b, 2*ReportIDSize)
	}
	if _, err := hex.Decode(id[:], b); err != nil {
		return fmt.Errorf("secagg: report ID %q is not hex", b)
	}
	return nil
}

// AssociatedData returns the associated data a seed is sealed with: the
// study hash (protocol.Study.Hash), the round (8 bytes, big-endian) and the
// report ID. A seed opens only for the same three.
func AssociatedData(study [32]byte, round int, id ReportID) []byte {
	ad := make([]byte, 0, 32+8+ReportIDSize)
	ad = append(ad, study[:]...)
	ad = binary.BigEndian.AppendUint64(ad, uint64(round))
	return append(ad, id[:]...)
}

// Seal seals seed to the helper's key with associated data ad
// (AssociatedData). The result is SealedSize bytes.
func Seal(p *PublicKey, seed Seed, ad []byte) ([]byte, error) {
	enc, s, err := hpke.NewSender(p.pk, kdf, aead, []byte(hpkeInfo))
	if err != nil {
		return nil, fmt.Errorf("secagg: sealing a seed: %w", err)
	}
	ct, err := s.Seal(ad, seed[:])
	if err != nil {
		return nil, fmt.Errorf("secagg: sealing a seed: %w", err)
	}
	return append(enc, ct...), nil
}

// Open opens a sealed seed with associated data ad. The error wraps
// ErrOpen when sealed is not a seed sealed to this key with ad.
func (k *PrivateKey) Open(sealed, ad []byte) (Seed, error) {
	var seed Seed
	if len(sealed) != SealedSize {
		return seed, fmt.Errorf("%w: %d bytes, want %d", ErrOpen, len(sealed), SealedSize)
	}
	r, err := hpke.NewRecipient(sealed[:32], k.sk, kdf, aead, []byte(hpkeInfo))
	if err != nil {
		return seed, fmt.Errorf("%w: %v", ErrOpen, err)
	}
	pt, err := r.Open(ad, sealed[32:])
	if err != nil || len(pt) != SeedSize {
		return seed, ErrOpen
	}
	copy(seed[:], pt)
	return seed, nil
}
