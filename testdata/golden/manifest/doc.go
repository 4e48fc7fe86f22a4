// Package manifest guards net/http.RoundTripper, listed in circuitgen.yaml.
package manifest
