// Package manifestscope guards net/http.RoundTripper from a manifest that
// names errors by the package names in scope there: http, the interface's
// own, and url, which net/http imports.
package manifestscope
