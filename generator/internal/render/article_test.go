package render

import "testing"

func TestArticle(t *testing.T) {
	for name, want := range map[string]string{
		"API": "an", "Invoicer": "an", "HTTPClient": "an", "SMTPSender": "an", "FTPStore": "an",
		"BillingAPI": "a", "URLFetcher": "a", "Cache": "a", "Health": "a", "RoundTripper": "a", "UserStore": "a", "Uploader": "an", "x": "a", "": "a",
	} {
		if got := article(name); got != want {
			t.Errorf("article(%q) = %q, want %q", name, got, want)
		}
	}
}
