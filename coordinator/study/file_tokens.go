package study

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
)

// NewToken returns a fresh secret token: 32 bytes from crypto/rand in
// unpadded base64url (43 characters, safe in a URL fragment).
func NewToken() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// HashToken returns the hex SHA-256 of a token, as stored in study files.
func HashToken(token string) string {
	s := sha256.Sum256([]byte(token))
	return hex.EncodeToString(s[:])
}

// TokenMatches reports in constant time whether token hashes to hash.
func TokenMatches(token, hash string) bool {
	return subtle.ConstantTimeCompare([]byte(HashToken(token)), []byte(hash)) == 1
}

// Tokens maps join tokens to LHA indices. Lookups hash the presented token
// first, so the map is keyed by hashes and its timing reveals nothing about
// the stored tokens; the match is confirmed with a constant-time compare.
type Tokens struct {
	byHash map[string]int
	hashes []string
	admin  string
}

// NewTokens indexes f's token hashes.
func NewTokens(f *File) *Tokens {
	t := &Tokens{byHash: make(map[string]int, len(f.LHAs)), admin: f.AdminTokenSHA256}
	for i, l := range f.LHAs {
		t.byHash[l.TokenSHA256] = i
		t.hashes = append(t.hashes, l.TokenSHA256)
	}
	return t
}

// LHA returns the index of the LHA holding token, or -1.
func (t *Tokens) LHA(token string) int {
	h := HashToken(token)
	i, ok := t.byHash[h]
	if !ok || subtle.ConstantTimeCompare([]byte(h), []byte(t.hashes[i])) != 1 {
		return -1
	}
	return i
}

// Admin reports whether token is the admin token.
func (t *Tokens) Admin(token string) bool { return TokenMatches(token, t.admin) }
