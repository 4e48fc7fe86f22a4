package model

import "testing"

func TestCamel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"billing-api:charge", "BillingAPICharge"},
		{"kv", "Kv"},
		{"payment_gateway.refund", "PaymentGatewayRefund"},
		{"http-url-id", "HTTPURLID"},
	}
	for _, tt := range tests {
		if got := camel(tt.in); got != tt.want {
			t.Errorf("camel(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
