package series

import "bytes"

// magics are the first bytes of common non-text files, with what they are
// for people.
var magics = []struct {
	prefix, kind string
}{
	{"\x89PNG\r\n\x1a\n", "a PNG image"},
	{"\xFF\xD8\xFF", "a JPEG image"},
	{"GIF87a", "a GIF image"},
	{"GIF89a", "a GIF image"},
	{"%PDF-", "a PDF document"},
	{"\x7FELF", "a program (ELF executable)"},
	{"MZ", "a Windows program (.exe or .dll)"},
	{"\xFE\xED\xFA\xCE", "a macOS program"},
	{"\xFE\xED\xFA\xCF", "a macOS program"},
	{"\xCE\xFA\xED\xFE", "a macOS program"},
	{"\xCF\xFA\xED\xFE", "a macOS program"},
	{"\x00asm", "a WebAssembly program"},
	{"7z\xBC\xAF\x27\x1C", "a 7-Zip archive"},
	{"Rar!\x1A\x07", "a RAR archive"},
	{"BZh", "a bzip2 archive"},
	{"\xFD7zXZ\x00", "an xz archive"},
	{"(\xB5/\xFD", "a zstd archive"},
	{"SQLite format 3\x00", "an SQLite database"},
	{"RIFF", "a media file (RIFF: WAV, AVI or WebP)"},
	{"OggS", "an audio or video file (Ogg)"},
	{"ID3", "an MP3 audio file"},
}

// binaryKind says what a file that is not text looks like, from its
// content only (never its name): a known signature, or "binary data" when
// its first 8 KiB hold NUL bytes (which CSV text never has, UTF-16 text
// aside). "" means it may be text.
func binaryKind(data []byte) string {
	for _, m := range magics {
		if bytes.HasPrefix(data, []byte(m.prefix)) {
			if m.prefix == "MZ" && !bytes.Contains(data[:min(len(data), 1024)], []byte("PE\x00\x00")) &&
				!bytes.Contains(data[:min(len(data), 256)], []byte("This program")) {
				continue // a CSV whose first area is named MZ…
			}
			if m.prefix == "BZh" && (len(data) < 4 || data[3] < '1' || data[3] > '9') {
				continue
			}
			if m.prefix == "ID3" && (len(data) < 4 || data[3] > 4) {
				continue
			}
			return m.kind
		}
	}
	if hasUTF16BOM(data) {
		return ""
	}
	if bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0 {
		return "binary data (not text)"
	}
	return ""
}
