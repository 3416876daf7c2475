package ui

import "github.com/vugu/vugu/js"

// objectURL puts content into a browser Blob of the given MIME type and
// returns its blob: URL for a download link, revoking prev (the link's
// previous URL) so that its memory is freed. The address stays short
// whatever the content's size: vugu copies every attribute through a
// 16 KiB buffer, and a data: URL of a forecast for hundreds of areas, or
// of a long ledger, would not fit it and stop the app. Outside a browser
// (unit tests) it returns "".
func objectURL(prev, content, mime string) string {
	url := js.Global().Get("URL")
	if !url.Truthy() {
		return ""
	}
	if prev != "" {
		url.Call("revokeObjectURL", prev)
	}
	if content == "" {
		return ""
	}
	parts := js.Global().Get("Array").New(content)
	opts := js.Global().Get("Object").New()
	opts.Set("type", mime)
	blob := js.Global().Get("Blob").New(parts, opts)
	return url.Call("createObjectURL", blob).String()
}
