package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// Client is BillingAPI over HTTP.
type Client struct {
	base string
	http *http.Client
}

var _ BillingAPI = (*Client)(nil)

// NewClient returns a client of the provider at baseURL using hc (nil for
// http.DefaultClient's settings with a fresh transport).
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	return &Client{base: baseURL, http: hc}
}

// Health returns the provider's raw health response.
func (c *Client) Health(ctx context.Context) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/health", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, connErr("health", err)
	}
	return resp, nil
}

// Charge charges a customer.
func (c *Client) Charge(ctx context.Context, r ChargeRequest) (*Receipt, error) {
	var rec Receipt
	if err := c.do(ctx, "charge", http.MethodPost, "/v1/charges", r, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// Receipt looks the receipt of the charge id up.
func (c *Client) Receipt(ctx context.Context, id string) (*Receipt, error) {
	var rec Receipt
	if err := c.do(ctx, "receipt", http.MethodGet, "/v1/charges/"+url.PathEscape(id), nil, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// Refund refunds amount of the charge receiptID.
func (c *Client) Refund(ctx context.Context, receiptID string, amount Money) (*Receipt, error) {
	var rec Receipt
	body := struct {
		ReceiptID string `json:"receipt_id"`
		Amount    Money  `json:"amount"`
	}{receiptID, amount}
	if err := c.do(ctx, "refund", http.MethodPost, "/v1/refunds", body, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// Invoices lists a customer's invoices.
func (c *Client) Invoices(ctx context.Context, customerID string, opts ...ListOption) ([]Invoice, error) {
	var q listQuery
	for _, o := range opts {
		o(&q)
	}
	v := url.Values{}
	if q.hasLimit {
		v.Set("limit", strconv.Itoa(q.limit))
	}
	if q.unpaid {
		v.Set("unpaid", "true")
	}
	if q.startID != "" {
		v.Set("after", q.startID)
	}
	path := "/v1/customers/" + url.PathEscape(customerID) + "/invoices"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out []Invoice
	if err := c.do(ctx, "invoices", http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Close releases idle connections.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

func (c *Client) do(ctx context.Context, op, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("billing: %s: %w", op, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("billing: %s: %w", op, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return connErr(op, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return connErr(op, err)
	}
	switch {
	case resp.StatusCode == http.StatusPaymentRequired:
		return ErrDeclined
	case resp.StatusCode/100 != 2:
		return &StatusError{Op: op, Status: resp.StatusCode, Body: string(bytes.TrimSpace(data))}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("billing: %s: decode response: %w", op, err)
	}
	return nil
}

// connErr classifies a transport error: the context's own errors stay
// reachable with errors.Is, anything else is a ConnectionError.
func connErr(op string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("billing: %s: %w", op, err)
	}
	return &ConnectionError{Op: op, Err: err}
}
